// The command lines `kernscope record --backend ncu` and `--gemm-shapes` build (no GPU here: the
// lines themselves are checked, against the flags `ncu --help` 2025.3.1 documents and the cuBLAS /
// cuBLASLt logging variables of CUDA 13's headers, ../shared/reference/gpu-and-roofline.md §3-4).
#include <gtest/gtest.h>

#include <algorithm>

#include "readers/cublas_log/gemm_shapes_env.hpp"
#include "readers/ncu/ncu_command.hpp"

namespace ncu = kernscope::readers::ncu;
namespace cl = kernscope::readers::cublas_log;

namespace {

// The value after `flag` in args ("" when absent).
std::string after(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::ranges::find(args, flag);
  return it == args.end() || it + 1 == args.end() ? std::string() : *(it + 1);
}

}  // namespace

TEST(NcuCommand, ProfileRunWithFiltersAndRealClocks) {
  ncu::NcuRecordRequest r;
  r.ncu = "/opt/ncu";
  r.report_base = "/tmp/run";
  r.kernel_regexes = {"gemv", "nvjet"};
  r.launch_skip = 20;
  r.launch_count = 50;
  r.nvtx_include = "decode_step/";
  r.command = {"python3", "serve.py", "--x"};
  const auto args = ncu::ncu_profile_args(r);
  EXPECT_EQ(args.front(), "/opt/ncu");
  EXPECT_EQ(after(args, "--clock-control"), "none");
  EXPECT_EQ(after(args, "--target-processes"), "all");
  EXPECT_EQ(after(args, "-k"), "regex:gemv|nvjet");
  EXPECT_EQ(after(args, "-s"), "20");
  EXPECT_EQ(after(args, "-c"), "50");
  EXPECT_EQ(after(args, "--nvtx-include"), "decode_step/");
  EXPECT_NE(std::ranges::find(args, "--nvtx"), args.end());
  EXPECT_EQ(after(args, "-o"), "/tmp/run");
  // The program comes last, after "--", unchanged.
  const auto dashes = std::ranges::find(args, "--");
  ASSERT_NE(dashes, args.end());
  EXPECT_EQ(std::vector<std::string>(dashes + 1, args.end()), r.command);
  // Every section the roofline reads, and the exact counters next to the sections' rates.
  for (const char* section : {"SpeedOfLight", "SpeedOfLight_RooflineChart", "SpeedOfLight_HierarchicalTensorRooflineChart",
                              "WarpStateStats", "Occupancy", "MemoryWorkloadAnalysis"}) {
    EXPECT_TRUE(std::ranges::any_of(args, [&](const std::string& a) { return a == section; })) << section;
  }
  const std::string metrics = after(args, "--metrics");
  for (const char* m : {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
                        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum"}) {
    EXPECT_NE(metrics.find(m), std::string::npos) << m;
  }
  EXPECT_EQ(metrics.find(' '), std::string::npos);
}

TEST(NcuCommand, NoFiltersNoFilterFlags) {
  ncu::NcuRecordRequest r;
  r.report_base = "out";
  r.command = {"./app"};
  const auto args = ncu::ncu_profile_args(r);
  for (const char* flag : {"-k", "-s", "-c", "--nvtx", "--nvtx-include"}) {
    EXPECT_EQ(std::ranges::find(args, flag), args.end()) << flag;
  }
}

TEST(NcuCommand, ExportsThePagesKernscopeReads) {
  const std::string raw = ncu::ncu_csv_path("/tmp/run", "raw");
  EXPECT_EQ(raw, "/tmp/run_raw.csv");
  const auto args = ncu::ncu_export_args("ncu", "/tmp/run", "raw", raw);
  EXPECT_EQ(args, (std::vector<std::string>{"ncu", "-i", "/tmp/run.ncu-rep", "--csv", "--page", "raw", "--print-units", "base",
                                            "--log-file", "/tmp/run_raw.csv"}));
}

TEST(GemmShapes, LogsBesideTheTrace) {
  const auto logs = cl::gemm_shape_logs("/data/run-%p.sqlite");
  EXPECT_EQ(logs.cublaslt_log, "/data/run-%i.cublaslt.log");
  EXPECT_EQ(logs.cublas_log, "/data/run-all.cublas.log");
  const auto value = [&](const std::string& name) {
    for (const auto& [k, v] : logs.env) {
      if (k == name) return v;
    }
    return std::string("<unset>");
  };
  EXPECT_EQ(value("CUBLASLT_LOG_LEVEL"), "2");
  EXPECT_EQ(value("CUBLASLT_LOG_FILE"), logs.cublaslt_log);
  EXPECT_EQ(value("CUBLAS_LOGINFO_DBG"), "1");
  EXPECT_EQ(value("CUBLAS_LOGDEST_DBG"), logs.cublas_log);
  EXPECT_EQ(cl::gemm_shape_logs("trace.json.gz").cublaslt_log, "trace.cublaslt.log");
}
