// Setup before the first step: GPU work a program does before its step loop begins (loading the
// model's weights, allocating caches, warming up kernels outside any step) is not part of what a
// step costs. Decided by evidence: only when the trace shows where steps are (--step-range, step
// annotations, or a kernel period), a GPU operation launched before the first step starts — by its
// launching call's time, or by its own start when the launch was not traced — is setup. Without
// such steps (GPU idle gaps only) nothing is called setup. Totals of `stats` never use this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {
class TraceContext;
}

namespace kernscope::report {

struct SetupSplit {
  bool found = false;           // steps with evidence exist, so setup could be told apart
  TimeNs first_step_start = 0;  // the first step window's start
  // Per row of trace.kernels / memcpys / memsets: launched before the first step.
  std::vector<bool> kernel, memcpy, memset;
  std::int64_t kernels = 0, kernel_ns = 0;
  std::int64_t copies = 0, copy_bytes = 0, copy_ns = 0;
  std::int64_t memsets = 0, memset_ns = 0;
  std::string note;  // in words, empty when nothing was setup
};

// The run's shared lookups (trace_context.hpp) give the launching calls and the step windows.
SetupSplit split_setup(const TraceContext& context, const StepOptions& options = {});

}  // namespace kernscope::report
