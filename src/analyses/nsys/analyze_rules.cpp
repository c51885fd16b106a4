// The rules `analyze` runs, by name, for -r and --help-rules. The names are the ones the rules give
// their findings (nsys_rules.cpp, diagnosis/llm_rules.cpp); a test runs every rule on the bundled
// trace and checks each finding's rule is listed here.
#include "analyses/nsys/analyze.hpp"

namespace kernscope {

const std::vector<RuleInfo>& analyze_rules() {
  static const std::vector<RuleInfo> rules = {
      {"cuda_memcpy_async", "asynchronous memory copies from or to pageable memory (nsys analyze)"},
      {"cuda_memcpy_sync", "synchronous memory copies (nsys analyze)"},
      {"cuda_memset_sync", "synchronous memsets (nsys analyze)"},
      {"cuda_api_sync", "CUDA synchronization API calls (nsys analyze)"},
      {"gpu_gaps", "GPU idle for at least --gap ms (nsys analyze)"},
      {"gpu_time_util", "regions where the GPU is in use less than --threshold % (nsys analyze)"},
      {"llm_launch_bound", "decode steps whose time the host's launches set: the GPU idles most of each step"},
      {"llm_sync_in_loop", "synchronizations or device-to-host copies inside decode steps"},
      {"llm_alloc_in_loop", "allocations or frees inside decode steps"},
      {"llm_graphs_hidden", "CUDA graph launches traced as whole graphs: their kernels are not in the trace"},
      {"llm_tiny_kernels", "the median decode kernel runs for under 3 us"},
      {"llm_h2d_in_loop", "host-to-device copies inside decode steps"},
      {"llm_tail_anomalies", "kernels whose slowest invocations are far slower than usual (kernscope tail)"},
  };
  return rules;
}

}  // namespace kernscope
