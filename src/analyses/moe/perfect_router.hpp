// The perfect-router estimate (TensorRT-LLM's profiling guide reruns a model with
// its router forced even and calls routing the bottleneck when that is 10 % faster or more), made
// from the trace alone where the trace shows tokens per expert: an eager per-expert loop under
// record_shapes (eager_experts.hpp).
//
// The model. Such a loop runs one iteration per expert that received tokens, one after another on
// one thread: its cost is per iteration (host work measured as the spacing of consecutive
// iterations, and the GPU work launched within one) plus per token. With every token spread evenly,
// a layer invocation of T tokens runs min(E, T) iterations instead of the experts it hit; the
// per-token part moves between experts but its sum stays (T tokens either way), so what changes is
// the count of iterations times their fixed cost. GPU time per iteration is fitted as g0 + g1 x
// tokens (least squares over the trace's iterations) and host time per iteration is their median
// spacing. The added (or removed) iterations of each invocation are handed to the what-if replay as
// edits at the invocation's last expert, so the step time that follows comes from the same
// dependency graph as every other prediction: on a host-bound loop host time moves the step, on a
// GPU-bound one GPU time does. For such a loop the estimate is never a saving, by construction: every
// expert it hits has a token, so even routing runs as many iterations or more. That is the answer for
// serial expert loops (imbalance costs them nothing), not a limit of the trace.
//
// Grouped/fused expert kernels (one launch for all experts of a layer) carry no tokens per expert in
// any trace format kernscope reads, so no estimate is made for them; the result says why.
#pragma once

#include <cstdint>
#include <string>

#include "analyses/moe/eager_experts.hpp"
#include "analyses/moe/moe.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/trace_context.hpp"

namespace kernscope {

// The MoE analysis of the trace with its perfect-router estimate (where the trace allows one).
Result<MoeAnalysis> analyze_moe_with_router(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting);

PerfectRouter estimate_perfect_router(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                                      const moe::EagerExperts& eager);

}  // namespace kernscope
