#include "tracer/thread_cpu_sampler.hpp"

#include <time.h>

#include <chrono>

#include "base/thread_name.hpp"
#include "tracer/sampling_loop.hpp"

namespace kernscope::tracer {

std::int64_t ThreadCpuSampler::thread_cpu_ns(std::uint32_t tid) {
  // Linux's clock id of a thread's scheduler CPU time (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)):
  // what pthread_getcpuclockid gives, for a thread named by its kernel id.
  const clockid_t id = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
  timespec t{};
  if (clock_gettime(id, &t) != 0) return -1;
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

ThreadCpuSampler::ThreadCpuSampler(Clock clock, CpuClock cpu, int interval_us)
    : clock_(std::move(clock)), cpu_(std::move(cpu)), interval_us_(interval_us) {}

ThreadCpuSampler::~ThreadCpuSampler() { stop(); }

void ThreadCpuSampler::watch(std::uint32_t tid) {
  std::lock_guard lock(mutex_);
  for (const auto& w : watched_) {
    if (w.tid == tid) return;
  }
  Watched w;
  w.tid = tid;
  watched_.push_back(w);
}

void ThreadCpuSampler::start() {
  if (interval_us_ <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] {
    name_this_thread("ks-threadcpu");
    run_sampling_loop(mutex_, wake_, stopping_, active_, std::chrono::microseconds(interval_us_), [this] { sample_once(); });
  });
}

void ThreadCpuSampler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  close_all();
}

void ThreadCpuSampler::set_active(bool active) {
  {
    std::lock_guard lock(mutex_);
    if (active_ && !active) close_all();
    active_ = active;
  }
  wake_.notify_all();
}

void ThreadCpuSampler::close_all() {
  for (auto& w : watched_) {
    if (w.has_open) closed_.push_back(w.open);
    w.has_open = false;
    w.at = w.cpu = -1;
  }
}

void ThreadCpuSampler::sample_once() {
  std::lock_guard lock(mutex_);
  for (auto& w : watched_) {
    const std::int64_t now = clock_();
    const std::int64_t cpu = cpu_(w.tid);
    if (cpu < 0) {  // the thread ended: its last interval is complete
      if (w.has_open) closed_.push_back(w.open);
      w.has_open = false;
      w.at = w.cpu = -1;
      continue;
    }
    if (w.at >= 0 && now > w.at && cpu >= w.cpu) {
      const std::int64_t used = cpu - w.cpu;
      const std::uint8_t busy = used * 2 >= now - w.at ? 1 : 0;
      if (w.has_open && w.open.busy == busy && w.open.end == w.at) {
        w.open.end = now;
        w.open.cpu_ns += used;
      } else {
        if (w.has_open) closed_.push_back(w.open);
        w.open = ThreadCpuRow{w.tid, w.at, now, used, busy};
        w.has_open = true;
      }
    }
    w.at = now;
    w.cpu = cpu;
  }
}

void ThreadCpuSampler::drain(std::vector<ThreadCpuRow>& out) {
  std::lock_guard lock(mutex_);
  out.insert(out.end(), closed_.begin(), closed_.end());
  closed_.clear();
}

}  // namespace kernscope::tracer
