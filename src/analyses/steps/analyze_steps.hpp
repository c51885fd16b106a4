// `steps` over a context several analyses of one run share (trace_context.hpp: its step windows
// and kernel classes are found once); the overload taking a trace is in kernscope/steps.hpp.
#pragma once

#include "kernscope/error.hpp"
#include "kernscope/steps.hpp"

namespace kernscope {

class TraceContext;

Result<StepAnalysis> analyze_steps(const TraceContext& context, const StepOptions& options);

}  // namespace kernscope
