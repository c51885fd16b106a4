// When a CUDA-calling thread was on a CPU, from the trace's thread CPU stretches (Trace::thread_cpu:
// kernscope record's clocks of the launching threads, or nsys's scheduling events). This is what
// tells host work that makes no CUDA call (generate()'s Python set-up before its first launch) from
// a thread asleep between requests; traces without it answer "unknown" and callers keep their
// CUDA-only reading.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope::report {

class ThreadOnCpu {
 public:
  ThreadOnCpu(const Trace& trace, std::int64_t global_tid);

  bool known() const { return !start_.empty(); }
  // Whether the thread used a CPU for at least half of [a, b); false where the stretches do not
  // cover it all (nothing known is not busy).
  bool mostly_busy(TimeNs a, TimeNs b) const;
  // Where the run of work that reaches `t` began: back over busy stretches and idle ones shorter
  // than `gap` (a preemption, a short wait) to the end of the last idle stretch of `gap` or more
  // (the thread asleep between requests). nullopt where that end lies before `not_before` or the
  // stretches do not reach back to it.
  std::optional<TimeNs> woke_before(TimeNs t, std::int64_t gap, TimeNs not_before) const;

 private:
  std::vector<TimeNs> start_, end_;
  std::vector<std::int64_t> cpu_ns_;
  std::vector<std::uint8_t> busy_;
};

// Where a trace's thread CPU stretches came from, in words.
const char* thread_cpu_source(const Trace& trace);

}  // namespace kernscope::report
