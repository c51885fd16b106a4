// Steps as forward passes of the model, found from the model's own structure where nothing
// annotates steps (step_windows.hpp calls these after annotations, before the kernel period):
//   1. PyTorch's profiler with stacks: each outermost `nn.Module: X` Python range on the thread that
//      launches the process's kernels is one call of the whole model, a forward pass;
//   2. otherwise the kernels a forward pass of a language model runs exactly once: its token
//      embedding lookup (class embedding) at the start and its token sampling (class sampling,
//      argmax/top-k/draw) at the end, op classes from data/op_rules.tsv. An embedding kernel and a
//      sampling kernel whose launches alternate (E S E S ...) with one each per pass, the same
//      number of kernels apart in most passes (the period of the sequence), mark the passes; of
//      such pairs the one with the fewest launches wins (a per-layer gather and a router's top-k
//      alternate too, L times per pass; a per-call setup kernel never pairs with a sampling one).
// Both give step starts on the launching thread (or in GPU time where launches are not traced);
// a step runs until the next one starts, except across a gap between requests (the host makes no
// CUDA call for far longer than inside steps): that gap is between steps, not idle inside one, and
// the step after it starts where its request's host work resumes (generate()'s set-up belongs to
// the request's first forward, as the user's TTFT counts it).
#pragma once

#include <optional>
#include <vector>

#include "analyses/nsys/nvtx_ranges.hpp"
#include "analyses/steps/step_windows.hpp"

namespace kernscope {
class TraceContext;
}

namespace kernscope::report {

// The process that launched the most kernels, and its kernels in launch (GPU start) order.
struct BusiestProcess {
  std::int64_t global_pid = 0;
  std::vector<RowIndex> order;
  std::size_t processes = 0;  // processes with kernels in the trace
};
BusiestProcess busiest_process_kernels(const Trace& trace);

// `process`: busiest_process_kernels(trace), found once for these and the kernel period.
std::optional<StepWindows> forward_passes_from_modules(const TraceContext& context, const std::vector<IndexedRange>& ranges,
                                                       const BusiestProcess& process);
std::optional<StepWindows> forward_passes_from_markers(const TraceContext& context, const BusiestProcess& process);

}  // namespace kernscope::report
