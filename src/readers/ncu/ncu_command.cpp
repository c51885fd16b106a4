#include "readers/ncu/ncu_command.hpp"

namespace kernscope::readers::ncu {

const std::vector<std::string>& ncu_record_sections() {
  static const std::vector<std::string> sections = {
      "SpeedOfLight", "SpeedOfLight_RooflineChart", "SpeedOfLight_HierarchicalTensorRooflineChart",
      "MemoryWorkloadAnalysis", "Occupancy", "WarpStateStats", "LaunchStats"};
  return sections;
}

const std::vector<std::string>& ncu_record_metrics() {
  // ncu leaves out, without error, counters the chip does not have (2025.3 on GH100), so the
  // tensor counters of several architectures can be listed; ncu_kernel_fields counts each FLOP once.
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> m = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                  "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
                                  "lts__t_sector_hit_rate.pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                  "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                  "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                                  "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__inst_executed_pipe_tensor.sum"};
    for (const char* p : {"d", "f", "h"}) {
      for (const char* op : {"add", "mul", "fma"}) m.push_back(std::string("sm__sass_thread_inst_executed_op_") + p + op + "_pred_on.sum");
    }
    for (const char* src : {"bf16_dst_fp32", "fp16_dst_fp16", "fp16_dst_fp32", "tf32_dst_fp32", "int8", "fp8", "fp64", "fp16"}) {
      m.push_back(std::string("sm__ops_path_tensor_src_") + src + ".sum");
      m.push_back(std::string("sm__ops_path_tensor_src_") + src + "_sparsity_off.sum");
    }
    return m;
  }();
  return metrics;
}

std::vector<std::string> ncu_profile_args(const NcuRecordRequest& r) {
  std::vector<std::string> args = {r.ncu, "--target-processes", "all", "--clock-control", "none"};
  for (const auto& s : ncu_record_sections()) {
    args.push_back("--section");
    args.push_back(s);
  }
  std::string metrics;
  for (const auto& m : ncu_record_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  args.push_back("--metrics");
  args.push_back(metrics);
  if (!r.kernel_regexes.empty()) {
    std::string regex;
    for (const auto& k : r.kernel_regexes) regex += (regex.empty() ? "" : "|") + k;
    args.push_back("-k");
    args.push_back("regex:" + regex);
  }
  if (r.launch_skip > 0) {
    args.push_back("-s");
    args.push_back(std::to_string(r.launch_skip));
  }
  if (r.launch_count > 0) {
    args.push_back("-c");
    args.push_back(std::to_string(r.launch_count));
  }
  if (!r.nvtx_include.empty()) {
    args.push_back("--nvtx");
    args.push_back("--nvtx-include");
    args.push_back(r.nvtx_include);
  }
  args.insert(args.end(), {"-f", "-o", r.report_base, "--"});
  args.insert(args.end(), r.command.begin(), r.command.end());
  return args;
}

std::string ncu_csv_path(const std::string& report_base, const std::string& page) { return report_base + "_" + page + ".csv"; }

std::vector<std::string> ncu_export_args(const std::string& ncu, const std::string& report_base, const std::string& page,
                                         const std::string& csv_path) {
  return {ncu, "-i", report_base + ".ncu-rep", "--csv", "--page", page, "--print-units", "base", "--log-file", csv_path};
}

}  // namespace kernscope::readers::ncu
