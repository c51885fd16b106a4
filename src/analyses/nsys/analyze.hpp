// Rules over a trace (kernscope analyze). First, Nsight Systems' six CUDA rules with the same
// findings, rows and order as `nsys analyze` 2025.3 (cuda_memcpy_async, cuda_memcpy_sync,
// cuda_memset_sync, cuda_api_sync, gpu_gaps, gpu_time_util).
#pragma once

#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct AnalyzeOptions {
  std::int64_t gap_ms = 500;       // gpu_gaps: minimum idle time
  int utilization_threshold = 50;  // gpu_time_util: flag chunks below this % in use
  int utilization_chunks = 30;     // gpu_time_util: chunks per device and process (1..1000)
  std::size_t rows = 50;           // evidence rows kept per rule (nsys's default)
};

struct Finding {
  std::string rule;        // nsys's rule name for its rules
  std::string title;       // e.g. "CUDA Async Memcpy with Pageable Memory"
  std::string severity;    // "none", "info", "warning"
  std::int64_t count = 0;  // offending calls or regions (all of them, not only the rows shown)
  bool skipped = false;    // the trace lacks what the rule needs
  std::string skip_reason;
  std::string advice;      // nsys's explanation and suggestion
  std::string no_result;   // what nsys says when nothing is found
  std::string action;      // the suggested action, one line
  std::string evidence;    // one line with the numbers behind the finding
  Table rows;              // the top offending calls or regions, as nsys lists them
};

Result<AnalyzeOptions> validate(const AnalyzeOptions& options);
std::vector<Finding> run_nsys_rules(const Trace& trace, const AnalyzeOptions& options);

}  // namespace kernscope

namespace kernscope {

struct StepAnalysis;
struct TailResult;

// kernscope's rules for LLM inference, over the steps (kernscope steps):
//   llm_launch_bound    decode steps where the GPU idles most of the step, with many launches and
//                       no CUDA graphs: launch/host overhead sets the time per token
//   llm_sync_in_loop    stream/device synchronisations or device-to-host copies inside decode steps
//   llm_alloc_in_loop   allocations or frees inside decode steps
//   llm_graphs_hidden   graph launches traced as whole graphs: their kernels are invisible
//   llm_tiny_kernels    the median decode kernel runs for under 3 us
//   llm_h2d_in_loop     host-to-device copies inside decode steps
//   llm_tail_anomalies  kernels whose slowest invocations are far slower than usual (kernscope tail)
// `kernel_tail`: the kernel tail statistics when the caller has them already (else computed).
std::vector<Finding> run_llm_rules(const Trace& trace, const StepAnalysis& steps, const AnalyzeOptions& options,
                                   const TailResult* kernel_tail = nullptr);
class TraceContext;
std::vector<Finding> run_llm_rules(const TraceContext& context, const StepAnalysis& steps, const AnalyzeOptions& options,
                                   const TailResult* kernel_tail);  // sharing the run's context

// Every rule `analyze` runs, in its order (nsys analyze's six, then the LLM rules above), with what it
// looks for: for `analyze -r RULE` and `analyze --help-rules`.
struct RuleInfo {
  std::string name, summary;
};
const std::vector<RuleInfo>& analyze_rules();

}  // namespace kernscope
