// Native stacks of every thread of this process, sampled on a timer from inside it (`kernscope
// record --sample cpu[:HZ]` on a program that is not Python). No CUDA, no CUPTI: the tracer starts
// it, and the unit tests drive it directly.
//
// How: a sampler thread, at each tick, sends SIGPROF with tgkill to every other thread listed in
// /proc/self/task. The handler unwinds its own thread with glibc's backtrace() into a preallocated
// slot (no allocation, no lock) and returns; the sampler thread moves finished slots into ordinary
// containers between ticks. Wall clock: a thread is sampled whether it runs or waits, as the Python
// sampler's are. Symbols are looked up only after the run (native_symbols.hpp).
//
// Why backtrace() and not libunwind: no new dependency, and on glibc >= 2.35 with libgcc >= 12 the
// unwinder finds each frame's unwind table through _dl_find_object, which takes no lock and is
// async-signal-safe; the one lazy step (backtrace loading libgcc_s) is done in start(), outside any
// handler. Its limit is shared with libunwind: code without unwind tables (some JIT code,
// hand-written assembly without CFI) ends the stack there.
//
// Why SIGPROF: its only conventional users are profilers (setitimer profiling, gperftools), which
// kernscope must not run beside anyway. start() refuses when a handler is installed already, and
// each tick checks the handler is still kernscope's before sending (a program that installs its own
// or resets it to the default, which would kill it, stops the sampling); signals that were not sent
// by this sampler (si_code SI_TKILL from this process) are ignored. SA_RESTART: a thread interrupted
// in a system call resumes it instead of seeing EINTR.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kernscope::tracer {

// KERNSCOPE_HOST_INFO's "sampler" value: `kernscope host` words this sampler's cost as CPU time.
inline constexpr const char* kNativeSamplerName = "native (SIGPROF, glibc backtrace)";

struct NativeSamplerOptions {
  double hz = 100;
  // Above this share of one CPU (the sampler thread's CPU time plus every handler's time, per
  // second of wall time), the rate is halved.
  double max_busy_share = 0.05;
  // Thread-samples kept; beyond, sampling stops (and says so).
  std::size_t max_samples = 2'000'000;
};

// What was sampled: distinct stacks of return addresses (innermost first) and samples that
// point at them.
struct NativeSamples {
  std::vector<std::vector<std::uintptr_t>> stacks;
  std::vector<std::int64_t> time_ns;  // CLOCK_REALTIME, the clock of CUPTI's timestamps
  std::vector<std::uint32_t> tid;
  std::vector<std::uint32_t> stack;   // index into stacks
  std::map<std::uint32_t, std::string> thread_names;  // read from /proc when a thread is first seen
};

class NativeSampler {
 public:
  explicit NativeSampler(NativeSamplerOptions options);
  ~NativeSampler();
  NativeSampler(const NativeSampler&) = delete;
  NativeSampler& operator=(const NativeSampler&) = delete;

  // Installs the handler and starts the sampler thread; false (why() says why) when it cannot.
  // One sampler per process at a time.
  bool start();
  // Stops the thread, waits briefly for signals still in flight, restores the previous handler.
  void stop();
  const std::string& why() const { return why_; }

  const NativeSamples& samples() const { return samples_; }
  // KERNSCOPE_HOST_INFO rows: rate asked and achieved, cost, what was lowered, dropped or stopped.
  std::vector<std::pair<std::string, std::string>> info() const;

 private:
  static void* thread_main(void* self);
  void run();
  void tick(std::vector<std::uint32_t>& tids);
  void drain();
  bool handler_still_ours() const;

  NativeSamplerOptions options_;
  NativeSamples samples_;
  std::map<std::vector<std::uintptr_t>, std::uint32_t> stack_ids_;
  std::map<std::uint32_t, std::uint64_t> sightings_;  // ticks at which each thread was listed
  std::string why_;
  std::string stopped_;
  std::vector<std::pair<double, double>> lowered_;
  std::atomic<bool> stop_{false};
  bool running_ = false;
  pthread_t thread_{};
  std::uint32_t sampler_tid_ = 0;
  double period_s_ = 0.01;
  std::int64_t started_ns_ = 0, stopped_ns_ = 0;
  std::int64_t rounds_ = 0;
  std::int64_t sent_ = 0;
  std::int64_t thread_cpu_ns_ = 0;
};

}  // namespace kernscope::tracer
