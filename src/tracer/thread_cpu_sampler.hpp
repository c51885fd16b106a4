// Whether the threads that call CUDA were running on a CPU, read on a thread of its own: between
// two CUDA calls, a launching thread that computes (Python, a tokenizer, the
// framework) and one that sleeps or waits look the same in a trace of calls, and the GPU's idle time
// in that gap was "unexplained". Each tick reads every watched thread's CPU clock (the kernel's
// per-thread CPU time, clock_gettime on the thread's clock id: one system call a thread, none in the
// launch path) and turns consecutive ticks into intervals: a thread is busy over a tick when it used
// half the tick's wall time or more on a CPU. Consecutive ticks of the same state merge, so a thread
// that computes for 3 ms between steps gives one busy interval of about 3 ms at 1 ms ticks.
//
// Watched: the thread that started CUDA (the tracer's set-up runs inside its first CUDA call) and
// every thread a CUDA call is decoded from (watch(), from the collector), so later launching threads
// join once their first records are decoded.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

class ThreadCpuSampler {
 public:
  using Clock = std::function<std::int64_t()>;                  // the trace's timestamps
  using CpuClock = std::function<std::int64_t(std::uint32_t)>;  // a thread's CPU time in ns; -1: gone

  // A thread's CPU clock read through Linux's per-thread CPU clock id (any thread of this process).
  static std::int64_t thread_cpu_ns(std::uint32_t tid);

  ThreadCpuSampler(Clock clock, CpuClock cpu, int interval_us);
  ~ThreadCpuSampler();

  void watch(std::uint32_t tid);
  void start();  // the sampling thread (interval_us > 0)
  void stop();   // joins it and closes the open intervals
  // Samples only while active (a paused tracer keeps nothing from outside its windows): going
  // inactive closes every open interval, so no interval spans a pause.
  void set_active(bool active);
  // One tick: every watched thread's CPU clock (the thread calls this every interval).
  void sample_once();
  // Moves the closed intervals into `out`.
  void drain(std::vector<ThreadCpuRow>& out);

 private:
  struct Watched {
    std::uint32_t tid = 0;
    std::int64_t at = -1, cpu = -1;  // the last reading; -1: none yet
    ThreadCpuRow open;
    bool has_open = false;
  };
  void close_all();

  Clock clock_;
  CpuClock cpu_;
  int interval_us_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false, active_ = true;
  std::vector<Watched> watched_;
  std::vector<ThreadCpuRow> closed_;
  std::thread thread_;
};

}  // namespace kernscope::tracer
