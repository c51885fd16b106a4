#include "tracer/native_sampler.hpp"
#include "base/thread_name.hpp"

#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>

namespace kernscope::tracer {
namespace {

constexpr int kSignal = SIGPROF;
constexpr int kMaxDepth = 128;        // frames kept per sample (the outermost beyond are cut)
constexpr int kHandlerFrames = 4;     // room for the handler's own frames and the signal trampoline
constexpr std::size_t kSlots = 4096;  // samples that can be in flight between two drains

enum SlotState : std::uint32_t { kFree = 0, kWriting = 1, kDone = 2 };

struct Slot {
  std::atomic<std::uint32_t> state{kFree};
  std::uint32_t tid = 0;
  std::int32_t depth = 0;
  std::int64_t time_ns = 0;
  std::uintptr_t pcs[kMaxDepth];
};

// What the handler touches: allocated once and never freed, so a handler still running on some
// thread after stop() never reads freed memory.
struct Shared {
  Slot slots[kSlots];
  std::atomic<std::uint64_t> claim{0};
  std::atomic<std::int64_t> handled{0};
  std::atomic<std::int64_t> dropped{0};    // no free slot
  std::atomic<std::int64_t> truncated{0};  // deeper than kMaxDepth
  std::atomic<std::int64_t> unwound_no_further{0};  // the unwinder could not pass the signal frame
  std::atomic<std::int64_t> busy_ns{0};    // time spent in handlers, all threads
};

Shared* g_shared = nullptr;
std::atomic<bool> g_in_use{false};
struct sigaction g_previous {};

std::int64_t clock_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::uintptr_t interrupted_pc(void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

// Async-signal-safe: atomics, clock_gettime (vDSO), syscall(gettid), backtrace (primed in start()).
void on_signal(int, siginfo_t* info, void* context) {
  Shared* shared = g_shared;
  if (shared == nullptr || info == nullptr || info->si_code != SI_TKILL || info->si_pid != getpid()) return;
  const int saved_errno = errno;
  const std::int64_t began = clock_ns(CLOCK_MONOTONIC);
  Slot& slot = shared->slots[shared->claim.fetch_add(1, std::memory_order_relaxed) % kSlots];
  std::uint32_t expected = kFree;
  if (!slot.state.compare_exchange_strong(expected, kWriting, std::memory_order_acquire)) {
    shared->dropped.fetch_add(1, std::memory_order_relaxed);
  } else {
    slot.time_ns = clock_ns(CLOCK_REALTIME);
    slot.tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
    void* frames[kMaxDepth + kHandlerFrames];
    const int n = backtrace(frames, kMaxDepth + kHandlerFrames);
    // The first frames are this handler's and the kernel's signal trampoline: the stack proper
    // starts at the interrupted instruction, which the unwinder reports exactly.
    const std::uintptr_t pc = interrupted_pc(context);
    int first = -1;
    for (int i = 0; i < n && i <= kHandlerFrames; ++i) {
      if (reinterpret_cast<std::uintptr_t>(frames[i]) == pc) {
        first = i;
        break;
      }
    }
    int depth = 0;
    if (first < 0) {
      slot.pcs[depth++] = pc;  // the interrupted instruction alone
      shared->unwound_no_further.fetch_add(1, std::memory_order_relaxed);
    } else {
      for (int i = first; i < n && depth < kMaxDepth; ++i) slot.pcs[depth++] = reinterpret_cast<std::uintptr_t>(frames[i]);
      if (n == kMaxDepth + kHandlerFrames) shared->truncated.fetch_add(1, std::memory_order_relaxed);
    }
    slot.depth = depth;
    slot.state.store(kDone, std::memory_order_release);
  }
  shared->handled.fetch_add(1, std::memory_order_relaxed);
  shared->busy_ns.fetch_add(clock_ns(CLOCK_MONOTONIC) - began, std::memory_order_relaxed);
  errno = saved_errno;
}

bool is_default_or_ignored(const struct sigaction& action) {
  return !(action.sa_flags & SA_SIGINFO) && (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN);
}

std::string thread_name(std::uint32_t tid) {
  std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

std::string hz_text(double hz) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", hz);
  return buffer;
}

}  // namespace

NativeSampler::NativeSampler(NativeSamplerOptions options) : options_(options) {}

NativeSampler::~NativeSampler() { stop(); }

bool NativeSampler::start() {
  if (!(options_.hz >= 1 && options_.hz <= 1000)) {
    why_ = "sampling rate " + hz_text(options_.hz) + " Hz is outside 1..1000";
    return false;
  }
  if (g_in_use.exchange(true)) {
    why_ = "another native sampler runs in this process";
    return false;
  }
  struct sigaction current {};
  sigaction(kSignal, nullptr, &current);
  if (!is_default_or_ignored(current)) {
    g_in_use = false;
    why_ = "the program has its own SIGPROF handler (another profiler?): native stacks not sampled";
    return false;
  }
  if (g_shared == nullptr) g_shared = new Shared;
  for (auto* counter : {&g_shared->handled, &g_shared->dropped, &g_shared->truncated, &g_shared->unwound_no_further,
                        &g_shared->busy_ns}) {
    counter->store(0);
  }
  // backtrace() loads libgcc_s on its first call: made here, never first inside a handler.
  void* prime[4];
  backtrace(prime, 4);

  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(kSignal, &action, &g_previous);

  period_s_ = 1.0 / options_.hz;
  started_ns_ = clock_ns(CLOCK_REALTIME);
  stop_ = false;
  // The sampler thread takes no signals: the program's go to its own threads, SIGPROF included.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int created = pthread_create(&thread_, nullptr, &NativeSampler::thread_main, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (created != 0) {
    sigaction(kSignal, &g_previous, nullptr);
    g_in_use = false;
    why_ = std::string("cannot start the sampler thread: ") + std::strerror(created);
    return false;
  }
  running_ = true;
  return true;
}

void* NativeSampler::thread_main(void* self) {
  name_this_thread("ks-stacks");
  static_cast<NativeSampler*>(self)->run();
  return nullptr;
}

bool NativeSampler::handler_still_ours() const {
  struct sigaction current {};
  sigaction(kSignal, nullptr, &current);
  return (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_signal;
}

void NativeSampler::run() {
  sampler_tid_ = static_cast<std::uint32_t>(syscall(SYS_gettid));
  std::vector<std::uint32_t> tids;
  std::int64_t next = clock_ns(CLOCK_MONOTONIC);
  std::int64_t window_start = next;
  std::int64_t window_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  std::int64_t window_handlers = g_shared->busy_ns.load();
  // Each interval is the period times a uniform draw in [0.5, 1.5): the same rate on average, but
  // no phase lock with a program whose loop period is a multiple of the sampling period (a 60 ms
  // loop sampled every 10 ms exactly got 4 of its 6 samples in a function taking 36 ms, 67 % for 60 %).
  std::minstd_rand jitter(static_cast<std::uint32_t>(next) ^ sampler_tid_);
  std::uniform_real_distribution<double> stretch(0.5, 1.5);
  while (!stop_) {
    next += static_cast<std::int64_t>(period_s_ * stretch(jitter) * 1e9);
    // Sleep in short pieces so stop() is answered quickly even at 1 Hz.
    for (std::int64_t now = clock_ns(CLOCK_MONOTONIC); now < next && !stop_; now = clock_ns(CLOCK_MONOTONIC)) {
      const std::int64_t wait = std::min<std::int64_t>(next - now, 20'000'000);
      timespec t{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
      nanosleep(&t, nullptr);
    }
    if (stop_) break;
    const std::int64_t now = clock_ns(CLOCK_MONOTONIC);
    if (now - next > static_cast<std::int64_t>(period_s_ * 1e9)) next = now;  // behind: no burst to catch up
    if (!handler_still_ours()) {
      stopped_ = "the program replaced kernscope's SIGPROF handler: sampling stopped there";
      break;
    }
    drain();
    tick(tids);
    if (samples_.time_ns.size() >= options_.max_samples) {
      stopped_ = "after " + std::to_string(options_.max_samples) + " thread-samples (the limit kept in memory)";
      break;
    }
    // The cost: this thread's CPU time and every handler's time, as a share of one CPU.
    if (now - window_start >= 1'000'000'000) {
      const std::int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
      const std::int64_t handlers = g_shared->busy_ns.load();
      const double share = static_cast<double>((cpu - window_cpu) + (handlers - window_handlers)) /
                           static_cast<double>(now - window_start);
      if (share > options_.max_busy_share && 1.0 / period_s_ > 1.0) {
        const double old_hz = 1.0 / period_s_;
        period_s_ = std::min(1.0, period_s_ * 2);
        lowered_.emplace_back(old_hz, 1.0 / period_s_);
      }
      window_start = now;
      window_cpu = cpu;
      window_handlers = handlers;
    }
  }
  thread_cpu_ns_ = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void NativeSampler::tick(std::vector<std::uint32_t>& tids) {
  tids.clear();
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      tids.push_back(static_cast<std::uint32_t>(std::strtoul(entry->d_name, nullptr, 10)));
    }
    closedir(dir);
  }
  const pid_t pid = getpid();
  for (std::uint32_t tid : tids) {
    if (tid == sampler_tid_) continue;
    // A thread is named by the program after it starts, often at once: its name is read again
    // at its 2nd, 4th, 8th, ... sighting, which costs a few reads per thread over a long run.
    const std::uint64_t seen = ++sightings_[tid];
    if ((seen & (seen - 1)) == 0) {
      // Empty when the thread ended since the listing: its earlier name stays.
      if (std::string name = thread_name(tid); !name.empty()) samples_.thread_names[tid] = std::move(name);
    }
    // A thread that ended since the listing answers ESRCH: nothing to do.
    if (syscall(SYS_tgkill, pid, tid, kSignal) == 0) ++sent_;
  }
  ++rounds_;
}

void NativeSampler::drain() {
  std::vector<std::uintptr_t> pcs;
  for (Slot& slot : g_shared->slots) {
    if (slot.state.load(std::memory_order_acquire) != kDone) continue;
    pcs.assign(slot.pcs, slot.pcs + slot.depth);
    auto [it, inserted] = stack_ids_.emplace(pcs, static_cast<std::uint32_t>(samples_.stacks.size()));
    if (inserted) samples_.stacks.push_back(pcs);
    samples_.time_ns.push_back(slot.time_ns);
    samples_.tid.push_back(slot.tid);
    samples_.stack.push_back(it->second);
    slot.state.store(kFree, std::memory_order_release);
  }
}

void NativeSampler::stop() {
  if (!running_) return;
  running_ = false;
  stop_ = true;
  pthread_join(thread_, nullptr);
  stopped_ns_ = clock_ns(CLOCK_REALTIME);
  // Signals sent but not yet handled (a thread about to run its handler): waited for briefly.
  const std::int64_t deadline = clock_ns(CLOCK_MONOTONIC) + 100'000'000;
  while (g_shared->handled.load() < sent_ && clock_ns(CLOCK_MONOTONIC) < deadline) {
    timespec t{0, 1'000'000};
    nanosleep(&t, nullptr);
  }
  drain();
  // A signal still pending on a thread that blocks it would, under the default action, end the
  // program: ignoring SIGPROF first discards pending ones (POSIX), then the old action returns.
  if (handler_still_ours()) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(kSignal, &ignore, nullptr);
    sigaction(kSignal, &g_previous, nullptr);
  }
  g_in_use = false;
}

std::vector<std::pair<std::string, std::string>> NativeSampler::info() const {
  if (g_shared == nullptr) return {{"sampler", kNativeSamplerName}, {"sampler_stopped", "before it started: " + why_}};
  const std::int64_t end = stopped_ns_ ? stopped_ns_ : clock_ns(CLOCK_REALTIME);
  const double wall_ns = static_cast<double>(std::max<std::int64_t>(1, end - started_ns_));
  const std::int64_t busy = thread_cpu_ns_ + g_shared->busy_ns.load();
  char achieved[32], share[32];
  std::snprintf(achieved, sizeof achieved, "%.1f", static_cast<double>(rounds_) * 1e9 / wall_ns);
  std::snprintf(share, sizeof share, "%.5f", static_cast<double>(busy) / wall_ns);
  std::vector<std::pair<std::string, std::string>> rows = {
      // "native": `kernscope host` words the cost as CPU time, not as an interpreter lock held.
      {"sampler", kNativeSamplerName},
      {"sampler_hz_asked", hz_text(options_.hz)},
      {"sampler_hz_achieved", achieved},
      {"sampler_rounds", std::to_string(rounds_)},
      {"sampler_busy_ns", std::to_string(busy)},
      {"sampler_busy_share", share},
      {"sampler_signals_sent", std::to_string(sent_)}};
  for (const auto& [from, to] : lowered_) {
    rows.emplace_back("sampler_lowered", hz_text(from) + " Hz -> " + hz_text(to) + " Hz: the sampler and its handlers took over " +
                                             std::to_string(static_cast<int>(options_.max_busy_share * 100)) + " % of one CPU");
  }
  if (!stopped_.empty()) rows.emplace_back("sampler_stopped", stopped_);
  if (const auto dropped = g_shared->dropped.load(); dropped > 0) {
    rows.emplace_back("sampler_dropped", std::to_string(dropped) + " thread-samples (no free slot between two ticks)");
  }
  if (const auto cut = g_shared->truncated.load(); cut > 0) {
    rows.emplace_back("sampler_truncated", std::to_string(cut) + " stacks deeper than " + std::to_string(kMaxDepth) +
                                               " frames: outermost frames cut");
  }
  if (const auto alone = g_shared->unwound_no_further.load(); alone > 0) {
    rows.emplace_back("sampler_unwind_failed", std::to_string(alone) +
                                                   " samples where the unwinder could not pass the signal frame: the "
                                                   "interrupted instruction alone");
  }
  return rows;
}

}  // namespace kernscope::tracer
