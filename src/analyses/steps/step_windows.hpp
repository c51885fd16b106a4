// Where the steps are: the time windows `steps` decomposes, from the most trustworthy source the
// trace offers, saying which was used.
//   1. --step-range NAME[@DOMAIN]: the ranges of that exact name;
//   2. annotations that name a step as a word (decode_step, prefill, ProfilerStep#3, vLLM's
//      execute_model / execute_N_context_M(..)_generation_K(..), TensorRT-LLM's _forward_step N: ...),
//      never a name that merely contains such a word (resolveForwardedInputs, pre_forward);
//   3. without them, forward passes of the model (forward_passes.hpp): the model's outermost module
//      calls where the profiler recorded Python stacks, else the token embedding and sampling
//      kernels every pass runs once;
//   4. else the period of the work: a kernel launched once per forward pass
//      (the anchor: the kernel whose occurrences are regular and furthest apart) starts each step;
//   5. stretches of GPU work split at idle gaps far longer than usual.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/phase.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {
class TraceContext;
}

namespace kernscope::report {

struct StepWindow {
  std::string name;
  TimeNs start = 0, end = 0;
  std::int64_t global_tid = 0;  // the host thread of the window; 0: a window in GPU time only
  Phase phase = Phase::kUnknown;
  // The process whose work the window holds (process_key packing); 0: the thread's process, or
  // any process for a window in GPU time only.
  std::int64_t global_pid = 0;
  // For forward passes (forward_passes.hpp): the request the pass belongs to, counting the runs of
  // passes separated by gaps between requests from 0; -1 for steps found otherwise.
  std::int32_t request = -1;
  // For forward passes from their sampling kernel: when the pass's sampled token reached the host
  // (its device-to-host copy); 0: not seen.
  TimeNs token_ns = 0;
};

enum class StepSource { kStepRange, kAnnotations, kForwardPasses, kKernelPeriod, kGpuGaps, kNone };

struct StepWindows {
  std::vector<StepWindow> windows;
  StepSource source = StepSource::kNone;
  std::string method;  // in words, for the report
  // Where steps left out at the front began (their anchor kernel's GPU start; 0: none left out):
  // their work is a partial step's, not setup before the first step (setup_split.hpp).
  TimeNs partial_gpu_start = 0;
  // Forward passes: the quiet time on the launching thread that separates requests (0: none used),
  // and whether requests start where recorded Python calls say (else at their first CUDA call).
  std::int64_t request_gap_ns = 0;
  bool request_starts_from_calls = false;
};

// The step name an annotation's text stands for and the phase it states, or nullopt when the
// text is not a step annotation (see the list above). `text` is the range's text without domain.
struct StepAnnotation {
  Phase phase = Phase::kUnknown;
  // The process whose work the window holds (process_key packing); 0: the thread's process, or
  // any process for a window in GPU time only.
  std::int64_t global_pid = 0;
};
std::optional<StepAnnotation> step_annotation(std::string_view text);

Result<StepWindows> find_step_windows(const Trace& trace, const StepOptions& options);
// The same, with the run's shared lookups (trace_context.hpp), found once per context and options.
Result<StepWindows> find_step_windows(const TraceContext& context, const StepOptions& options);
// Finds them anew (what the context's cache calls).
Result<StepWindows> find_step_windows_uncached(const TraceContext& context, const StepOptions& options);

}  // namespace kernscope::report
