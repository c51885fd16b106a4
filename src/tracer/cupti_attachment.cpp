#include "tracer/cupti_attachment.hpp"
#include "base/thread_name.hpp"

#include <time.h>

namespace kernscope::tracer {

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

CuptiAttachment::CuptiAttachment(std::chrono::milliseconds grace, Ops ops) : grace_(grace), ops_(std::move(ops)) {
  worker_ = std::thread([this] {
    name_this_thread("ks-attach");
    run();
  });
}

CuptiAttachment::~CuptiAttachment() {
  if (finish(std::chrono::hours(1)) == End::kDetachUnderWay) std::abort();  // unreachable: the bound is an hour
}

bool CuptiAttachment::start_recording(const std::string& why) {
  std::unique_lock lock(mutex_);
  if (finished_) return false;
  detach_at_.reset();  // a window opened within the grace: CUPTI stays
  // A detach under way ends first (bounded: the tracer's detach waits at most about 2 s); then
  // the window attaches CUPTI again.
  cv_.wait(lock, [this] { return !detaching_ || finished_; });
  if (finished_) return false;
  if (recording_) return true;
  if (!attached_) {
    const std::string failed = ops_.attach();
    if (!failed.empty()) {
      ++attach_failures_;
      ops_.say("cannot attach CUPTI for a capture window (" + failed + "); not recording, still paused");
      return false;
    }
    attached_ = true;
    ++attaches_;
  }
  ops_.record(true, why);
  recording_ = true;
  return true;
}

void CuptiAttachment::stop_recording(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (!recording_) return;
  ops_.record(false, why);
  recording_ = false;
  if (finished_) return;
  detach_at_ = std::chrono::steady_clock::now() + grace_;
  cv_.notify_all();
}

void CuptiAttachment::detach_later() {
  std::lock_guard lock(mutex_);
  if (finished_ || recording_ || !attached_) return;
  detach_at_ = std::chrono::steady_clock::now() + grace_;
  cv_.notify_all();
}

CuptiAttachment::End CuptiAttachment::finish(std::chrono::milliseconds bound) {
  std::unique_lock lock(mutex_);
  finished_ = true;
  detach_at_.reset();
  cv_.notify_all();
  if (!worker_.joinable()) return attached_ ? End::kAttached : End::kDetached;
  if (!cv_.wait_for(lock, bound, [this] { return worker_done_; })) {
    // The detach flushed CUPTI's records before it began to wait; what it waits on may be the
    // program thread a terminating signal interrupted. The program's end goes on without it.
    worker_.detach();
    return End::kDetachUnderWay;
  }
  lock.unlock();
  worker_.join();
  lock.lock();
  return attached_ ? End::kAttached : End::kDetached;
}

bool CuptiAttachment::attached() const {
  std::lock_guard lock(mutex_);
  return attached_;
}

bool CuptiAttachment::recording() const {
  std::lock_guard lock(mutex_);
  return recording_;
}

void CuptiAttachment::detach(std::unique_lock<std::mutex>& lock) {
  detaching_ = true;
  lock.unlock();
  const std::string failed = ops_.detach();
  lock.lock();
  detaching_ = false;
  cv_.notify_all();
  if (!failed.empty()) {
    // Attached-paused is the fallback: it costs about a point, it does not lose the program.
    ++detach_failures_;
    ops_.say("cannot detach CUPTI while paused (" + failed + "); it stays attached until the next window closes");
    return;
  }
  attached_ = false;
  ++detaches_;
}

void CuptiAttachment::run() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    if (!detach_at_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, *detach_at_) != std::cv_status::timeout) continue;  // re-read: opened, finished, moved
    if (!detach_at_ || std::chrono::steady_clock::now() < *detach_at_) continue;
    detach_at_.reset();
    if (recording_ || !attached_) continue;
    if (ops_.ready && !ops_.ready()) {
      detach_at_ = std::chrono::steady_clock::now() + grace_;
      continue;
    }
    detach(lock);
  }
  worker_done_ = true;
  cv_.notify_all();
}

std::vector<std::pair<std::string, std::string>> CuptiAttachment::info() const {
  std::lock_guard lock(mutex_);
  std::string line = "detached between windows: " + std::to_string(detaches_) + " detach(es), " + std::to_string(attaches_) +
                     " re-attach(es)";
  if (attach_failures_ > 0) line += ", " + std::to_string(attach_failures_) + " failed attach(es) (windows not recorded)";
  if (detach_failures_ > 0) line += ", " + std::to_string(detach_failures_) + " failed detach(es) (stayed attached)";
  return {{"paused_cupti", line}};
}

}  // namespace kernscope::tracer
