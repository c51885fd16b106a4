// The eager per-expert MoE loop of Hugging Face transformers, read from record_shapes: which expert
// each per-expert linear ran and on how many tokens, and the router linear that starts each layer
// invocation. The MoE analysis (moe.cpp) counts tokens per expert from it; the perfect-router
// estimate (perfect_router.cpp) measures the loop's cost per expert iteration from it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::moe {

// An eager per-expert loop read from record_shapes (Hugging Face transformers 5.x "eager" experts:
// for each expert that received tokens, `weight[e]` is an aten::select of index e on the 3-D expert
// weight [E, out, in], then aten::linear of that expert's tokens [n, in] with it). A layer's
// invocation starts at its router's aten::linear, whose weight is [E, hidden]. Only the first linear
// of an expert per invocation counts its tokens (the next ones, the down projection, carry the same).
struct ExpertCall {
  std::int64_t layer_invocation = 0;  // index into `invocations`
  std::int64_t expert = 0, tokens = 0;
  RowIndex op = 0;     // the aten::linear row of op_shapes
  bool first = false;  // the expert's first linear in the invocation: the one whose tokens count
};
struct EagerExperts {
  std::int64_t experts = 0, hidden = 0;
  std::vector<std::pair<std::int64_t, RowIndex>> invocations;  // (thread, router linear row)
  std::vector<ExpertCall> calls;
  std::vector<RowIndex> router_ops;
  std::vector<RowIndex> ops_by_thread;  // op_shapes rows by thread, then start (kernels_of_op searches it)
};

EagerExperts eager_experts(const Trace& trace);

// The kernels of each operator's external id (Kineto's link from a cpu_op to what it launched).
std::unordered_map<std::int64_t, std::vector<RowIndex>> kernels_by_external_id(const Trace& trace);

// The step (an index into steps.steps) that a thread's work at time t lies in, or -1.
std::int64_t step_containing(const StepAnalysis& steps, std::int64_t thread, TimeNs t);

// The kernels an op launched: those whose external id is an op's nested in it (same thread).
std::vector<RowIndex> kernels_of_op(const Trace& trace, RowIndex op, const std::vector<RowIndex>& ops_by_thread,
                                    const std::unordered_map<std::int64_t, std::vector<RowIndex>>& kernels_by_external);

}  // namespace kernscope::moe
