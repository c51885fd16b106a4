// Nsight Compute CSV reader against ncu's own values. Expected numbers were read from the
// fixtures with Python's csv module (tests/fixtures/ncu, made with ncu 2025.3.1 on an H100):
//   python3 -c "import csv,gzip; r=list(csv.reader(l for l in gzip.open(F,'rt') if not l.startswith('==')))"
// then the cells of the named columns; FLOP counts in the synthetic CSVs are the reference's
// H100 measurements (2*4096^3 = 137,438,953,472 for a 4096^3 BF16 GEMM) or hand arithmetic.
#include <gtest/gtest.h>

#include "readers/ncu/ncu_join.hpp"
#include "readers/ncu/ncu_report.hpp"
#include "readers/ncu/ncu_values.hpp"
#include "../support/ncu_fixtures.hpp"

namespace ncu = kernscope::readers::ncu;
using kernscope::testing::add_kernel;
using kernscope::testing::expect_value;
using kernscope::testing::ncu_fixture;

namespace {

ncu::NcuReport read(const std::string& name) { return expect_value(ncu::read_ncu_csv(ncu_fixture(name))); }

const ncu::FlopTerm* term(const ncu::NcuKernel& k, const std::string& precision, bool tensor) {
  for (const auto& t : k.flops) {
    if (t.precision == precision && t.tensor == tensor) return &t;
  }
  return nullptr;
}

}  // namespace

TEST(NcuValues, NumbersWithSeparatorsAndUnits) {
  EXPECT_EQ(ncu::parse_ncu_number("1,048,982,816"), 1048982816.0);
  EXPECT_EQ(ncu::parse_ncu_number("176,864.00"), 176864.0);
  EXPECT_EQ(ncu::parse_ncu_number("n/a"), std::nullopt);
  EXPECT_EQ(ncu::parse_ncu_number(""), std::nullopt);
  EXPECT_EQ(ncu::parse_ncu_number("PolicySpread"), std::nullopt);
  EXPECT_EQ(ncu::parse_ncu_number("12.5 (1;24)"), 12.5);
  // Decimal prefixes, as ncu's auto units scale: 176.384 us = 176,384 ns; 150.471168 MB = 150,471,168 B.
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(176.384, "usecond").value, 176384.0);
  EXPECT_EQ(ncu::to_base_unit(176.384, "usecond").unit, "ns");
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(1.5, "msecond").value, 1.5e6);
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(150.471168, "Mbyte").value, 150471168.0);
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(2, "KiB").value, 2048.0);
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(1.6, "Ghz").value, 1.6e9);
  EXPECT_EQ(ncu::to_base_unit(1.6, "Ghz").unit, "hz");
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(1.2, "cycle/nsecond").value, 1.2e9);
  EXPECT_EQ(ncu::to_base_unit(1.2, "cycle/nsecond").unit, "hz");
  EXPECT_DOUBLE_EQ(ncu::to_base_unit(2.7, "Tbyte/second").value, 2.7e12);
  EXPECT_EQ(ncu::to_base_unit(2.7, "Tbyte/second").unit, "byte/second");
  EXPECT_EQ(ncu::to_base_unit(168, "register/thread").unit, "register/thread");
  EXPECT_EQ(ncu::to_base_unit(44800, "ns").value, 44800.0);  // base units stay exact
}

TEST(NcuRaw, ReadsNcuValuesOfEveryKernel) {
  const auto report = read("dev1_raw_base.csv.gz");
  ASSERT_EQ(report.kernels.size(), 3u);
  EXPECT_EQ(report.page, ncu::NcuPage::kRaw);
  EXPECT_EQ(report.messages.size(), 3u);  // ==WARNING== and two ==PROF== lines
  const auto& gemm = report.kernels[0];
  EXPECT_EQ(gemm.id, 0);
  EXPECT_EQ(gemm.name, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  EXPECT_EQ(gemm.join_name, gemm.name);
  EXPECT_EQ(gemm.process_id, 639);
  EXPECT_EQ(gemm.stream, 7);
  EXPECT_EQ(gemm.compute_capability, "9.0");
  ASSERT_TRUE(gemm.grid && gemm.block);
  EXPECT_EQ(*gemm.grid, (std::array<std::int32_t, 3>{2, 66, 1}));
  EXPECT_EQ(*gemm.block, (std::array<std::int32_t, 3>{384, 1, 1}));
  EXPECT_EQ(gemm.duration_ns, 176384.0);
  EXPECT_EQ(gemm.dram_read_bytes, 150471168.0);
  EXPECT_EQ(gemm.dram_write_bytes, 28167936.0);
  EXPECT_EQ(gemm.dram_bytes, 150471168.0 + 28167936.0);
  EXPECT_TRUE(gemm.dram_bytes_exact);
  EXPECT_EQ(gemm.dram_bytes_metric, "dram__bytes_read.sum + dram__bytes_write.sum");
  EXPECT_EQ(gemm.sm_throughput_pct, 89.95);
  EXPECT_EQ(gemm.dram_throughput_pct, 30.22);
  EXPECT_EQ(gemm.l2_hit_rate_pct, 74.38);
  EXPECT_EQ(gemm.achieved_occupancy_pct, 14.64);
  EXPECT_EQ(gemm.sm_clock_hz, 1602164406.45);
  // The export has tensor instructions but no sm__ops_path_tensor_* counter: no FLOPs, said why.
  EXPECT_TRUE(gemm.flops.empty());
  EXPECT_FALSE(gemm.total_flops());
  ASSERT_EQ(gemm.flop_notes.size(), 1u);
  EXPECT_EQ(gemm.flop_notes[0].kind, "tensor_flops_unknown");
  EXPECT_NE(gemm.flop_notes[0].text.find("sm__inst_executed_pipe_tensor.sum"), std::string::npos);

  const auto& bias = report.kernels[1];
  EXPECT_EQ(bias.name, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_bias_TNT");
  EXPECT_EQ(bias.duration_ns, 44608.0);
  EXPECT_EQ(bias.dram_read_bytes, 117584384.0);
  EXPECT_EQ(bias.dram_write_bytes, 2488576.0);
  EXPECT_EQ(bias.l2_hit_rate_pct, 5.93);
  const auto& plain = report.kernels[2];
  EXPECT_EQ(plain.duration_ns, 44288.0);
  EXPECT_EQ(plain.dram_read_bytes, 117554944.0);
  EXPECT_EQ(plain.dram_write_bytes, 2457344.0);
  EXPECT_EQ(plain.invocation, 0);
  // The decode GEMMs read at least their 117,440,512 bytes of bf16 weights (14336 x 4096 x 2).
  EXPECT_GE(*plain.dram_read_bytes, 117440512.0);
}

TEST(NcuRaw, DefaultUnitsExportReadsTheSameWay) {
  // A separate run (values differ by a few tenths of a percent); units are read, not assumed.
  const auto report = read("dev1_raw.csv.gz");
  ASSERT_EQ(report.kernels.size(), 3u);
  EXPECT_EQ(report.kernels[0].duration_ns, 176128.0);
  EXPECT_EQ(report.kernels[0].dram_read_bytes, 150532864.0);
  EXPECT_EQ(report.kernels[0].dram_write_bytes, 28356096.0);
  EXPECT_EQ(report.kernels[1].dram_read_bytes, 117587456.0);
  EXPECT_EQ(report.kernels[2].duration_ns, 44096.0);
  EXPECT_EQ(report.kernels[2].sm_throughput_pct, 7.16);
}

TEST(NcuRaw, StallReasonsFromWarpState) {
  const auto report = read("dev1_wss.csv.gz");
  ASSERT_EQ(report.kernels.size(), 1u);
  const auto& k = report.kernels[0];
  EXPECT_EQ(k.duration_ns, 42496.0);
  EXPECT_EQ(k.join_name, "distribution_elementwise_grid_stride_kernel");
  ASSERT_GE(k.stalls.size(), 3u);
  // Largest first; "selected" (1.00, the warp that issued) is not a stall.
  EXPECT_EQ(k.stalls[0].reason, "not_selected");
  EXPECT_EQ(k.stalls[0].value, 3.64);
  EXPECT_EQ(k.stalls[1].reason, "wait");
  EXPECT_EQ(k.stalls[1].value, 1.85);
  EXPECT_EQ(k.stalls[2].reason, "math_pipe_throttle");
  EXPECT_EQ(k.stalls[2].value, 1.83);
  for (const auto& s : k.stalls) EXPECT_NE(s.reason, "selected");
  EXPECT_NE(k.stall_metric.find("per_issue_active"), std::string::npos);
}

TEST(NcuDetails, SectionsRulesAndSpeedups) {
  const auto report = read("dev1_det.csv.gz");
  EXPECT_EQ(report.page, ncu::NcuPage::kDetails);
  ASSERT_EQ(report.kernels.size(), 2u);
  const auto& k0 = report.kernels[0];
  EXPECT_EQ(k0.join_name, "distribution_elementwise_grid_stride_kernel");
  EXPECT_EQ(k0.duration_ns, 42464.0);
  EXPECT_EQ(k0.sm_throughput_pct, 72.64);
  EXPECT_EQ(k0.dram_throughput_pct, 8.58);
  EXPECT_EQ(k0.memory_throughput_pct, 18.54);
  EXPECT_EQ(k0.sm_clock_hz, 1988110517.14);
  ASSERT_EQ(k0.rules.size(), 1u);
  EXPECT_EQ(k0.rules[0].rule, "SOLBottleneck");
  EXPECT_EQ(k0.rules[0].type, "OPT");
  EXPECT_EQ(k0.rules[0].section, "SpeedOfLight");
  EXPECT_EQ(report.kernels[1].duration_ns, 42560.0);
  EXPECT_EQ(report.kernels[1].invocation, 1);  // the same kernel launched again
}

// A raw export as `--set roofline` plus exact counters writes it: overlapping tensor counters
// (aggregate and per-op) count once, FP-pipe FMAs count twice, auto-scaled units are converted.
TEST(NcuRaw, FlopsByPrecisionFromCounters) {
  const std::string csv =
      "==PROF== Connected to process 1 (/usr/bin/app)\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
      "\"Device\",\"CC\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"gpu__time_duration.sum\","
      "\"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum\",\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\","
      "\"sm__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\","
      "\"sm__sass_thread_inst_executed_op_fmul_pred_on.sum\",\"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum\","
      "\"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum\",\"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_on.sum\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"Kbyte\",\"usecond\",\"\",\"\",\"inst\",\"inst\",\"inst\",\"\",\"\",\"\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"_Z6matmulPKfS0_Pfi\",\"1\",\"7\",\"(128, 1, 1)\",\"(32, 32, 1)\",\"0\",\"9.0\","
      "\"150.471168\",\"28,167.936\",\"176.384\",\"137,438,953,472\",\"137,438,953,472\",\"1,000\",\"2,000\",\"300\","
      "\"10\",\"20\",\"5\"\n"
      "==PROF== Disconnected from process 1\n";
  auto report = ncu::parse_ncu_csv(csv, "synthetic");
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->kernels.size(), 1u);
  const auto& k = report->kernels[0];
  EXPECT_EQ(k.mangled, "_Z6matmulPKfS0_Pfi");
  EXPECT_EQ(k.demangled, "matmul(const float *, const float *, float *, int)");
  EXPECT_EQ(k.join_name, "matmul");
  EXPECT_EQ(k.duration_ns, 176384.0);
  EXPECT_EQ(k.dram_read_bytes, 150471168.0);
  EXPECT_EQ(k.dram_write_bytes, 28167936.0);
  const auto* bf16 = term(k, "bf16", true);
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(bf16->flops, 137438953472.0);  // the aggregate alone, not aggregate + per-op
  EXPECT_EQ(bf16->metrics, std::vector<std::string>{"sm__ops_path_tensor_src_bf16_dst_fp32.sum"});
  const auto* fp16 = term(k, "fp16", true);
  ASSERT_NE(fp16, nullptr);
  EXPECT_EQ(fp16->flops, 10.0 + 20.0 + 5.0);  // per-op: dst fp16 + dst fp32 (sparsity off + on)
  const auto* fp32 = term(k, "fp32", false);
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(fp32->flops, 1000.0 + 300.0 + 2 * 2000.0);  // fadd + fmul + 2 x ffma
  EXPECT_EQ(k.total_flops(), 137438953472.0 + 35.0 + 5300.0);
  EXPECT_TRUE(k.flop_notes.empty());
}

// ncu's roofline sections give rates: FLOPs = rate per elapsed cycle x elapsed cycles (inexact).
TEST(NcuRaw, FlopsFromPerCycleRates) {
  const std::string csv =
      "\"ID\",\"Kernel Name\",\"sm__cycles_elapsed.avg\",\"smsp__cycles_elapsed.avg\","
      "\"derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2\",\"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed\","
      "\"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed\",\"sm__ops_path_tensor_src_fp8_sparsity_off.sum.per_cycle_elapsed\","
      "\"dram__bytes.sum.per_second\",\"gpu__time_duration.sum\"\n"
      "\"\",\"\",\"cycle\",\"cycle\",\"inst/cycle\",\"inst/cycle\",\"inst/cycle\",\"\",\"Tbyte/second\",\"msecond\"\n"
      "\"3\",\"k\",\"1,000\",\"2,000\",\"4.5\",\"1.5\",\"0.5\",\"8,192\",\"2\",\"1.5\"\n";
  auto report = ncu::parse_ncu_csv(csv, "rates");
  ASSERT_TRUE(report) << report.error().message;
  const auto& k = report->kernels[0];
  const auto* fp64 = term(k, "fp64", false);
  ASSERT_NE(fp64, nullptr);
  EXPECT_DOUBLE_EQ(fp64->flops, (1.5 + 0.5 + 4.5) * 2000);  // smsp rates x smsp cycles; derived FMA already x2
  EXPECT_FALSE(fp64->exact);
  const auto* fp8 = term(k, "fp8", true);
  ASSERT_NE(fp8, nullptr);
  EXPECT_DOUBLE_EQ(fp8->flops, 8192.0 * 1000);
  ASSERT_TRUE(k.dram_bytes);
  EXPECT_DOUBLE_EQ(*k.dram_bytes, 2e12 * 1.5e-3);  // 2 TB/s for 1.5 ms
  EXPECT_FALSE(k.dram_bytes_exact);
}

TEST(NcuCsv, OtherLayoutsAndToolsAreRefused) {
  // nsys stats CSV.
  auto nsys = ncu::parse_ncu_csv("\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Name\"\n\"50.0\",\"100\",\"1\",\"k\"\n", "nsys.csv");
  ASSERT_FALSE(nsys);
  EXPECT_NE(nsys.error().message.find("not an Nsight Compute CSV"), std::string::npos);
  // ncu with --print-summary per-kernel.
  auto summary = ncu::parse_ncu_csv(
      "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Minimum\",\"Maximum\",\"Average\"\n", "sum.csv");
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message.find("another layout"), std::string::npos);
  // Only ncu's messages.
  auto none = ncu::parse_ncu_csv("==PROF== Connected to process 5\n==WARNING== No kernels were profiled.\n", "empty.csv");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("No kernels were profiled"), std::string::npos);
  // A header with no rows, and a row wider than its header.
  EXPECT_FALSE(ncu::parse_ncu_csv("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n", "h.csv"));
  EXPECT_FALSE(ncu::parse_ncu_csv("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"1\",\"2\"\n", "w.csv"));
  EXPECT_FALSE(ncu::read_ncu_csv(ncu_fixture("no_such_file.csv")));
}

TEST(NcuCsv, FunctionNamesAsNcuSpellsThem) {
  EXPECT_EQ(ncu::ncu_function_name("void unnamed>::distribution_kernel<float, 4>(long, T3)"), "distribution_kernel");
  EXPECT_EQ(ncu::ncu_function_name("void at::native::vectorized_elementwise_kernel<4, X>(int, T2)"), "vectorized_elementwise_kernel");
  EXPECT_EQ(ncu::ncu_function_name("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT"), "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT");
  EXPECT_EQ(ncu::ncu_function_name("gemv2T_kernel_val"), "gemv2T_kernel_val");
}

TEST(NcuJoin, ByNameAndOrderWithDimensionsBreakingTies) {
  const auto report = read("dev1_raw_base.csv.gz");  // 256x128 GEMM, bias GEMV, plain GEMV; grid (2,66,1), block (384,1,1)
  kernscope::Trace t;
  add_kernel(t, "distribution_elementwise_grid_stride_kernel", 10, 0, {1056, 1, 1}, {256, 1, 1});
  add_kernel(t, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 20, 0, {2, 66, 1}, {384, 1, 1});
  add_kernel(t, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_bias_TNT", 30, 0, {2, 66, 1}, {384, 1, 1});
  add_kernel(t, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT", 40, 0, {4, 66, 1}, {384, 1, 1});  // other grid: passed over
  add_kernel(t, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT", 50, 0, {2, 66, 1}, {384, 1, 1});
  const auto join = ncu::join_ncu_kernels(report, t);
  EXPECT_EQ(join.matched, 3u);
  EXPECT_EQ(join.trace_row[0], 1u);
  EXPECT_EQ(join.trace_row[1], 2u);
  EXPECT_EQ(join.trace_row[2], 4u);
  ASSERT_EQ(join.notes.size(), 1u);
  EXPECT_EQ(join.notes[0].kind, "trace_launches_passed_over");
  EXPECT_EQ(join.notes[0].count, 1);
  EXPECT_NE(join.notes[0].text.find("ncu: 1 launch(es) of nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT in the trace passed over"), std::string::npos)
      << join.notes[0].text;
  // The same trace without the projection kernels: two ncu rows find nothing, and say so.
  kernscope::Trace only_gemm;
  add_kernel(only_gemm, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 20, 0, {2, 66, 1}, {384, 1, 1});
  const auto partial = ncu::join_ncu_kernels(report, only_gemm);
  EXPECT_EQ(partial.matched, 1u);
  EXPECT_FALSE(partial.trace_row[1]);
  ASSERT_EQ(partial.notes.size(), 2u);
  for (const auto& n : partial.notes) {
    EXPECT_EQ(n.kind, "profiled_launches_unmatched");
    EXPECT_EQ(n.count, 1);
    EXPECT_NE(n.text.find("found no kernel in the trace (no kernel of that name)"), std::string::npos) << n.text;
  }
}

// The details page as older ncu versions wrote it (a "Kernel Time" column, no launch dimensions,
// scaled units): the values in base units, bytes from the Memory Workload Analysis throughput.
TEST(NcuDetails, OlderLayoutWithScaledUnits) {
  const std::string prefix = "\"0\",\"3553\",\"a.out\",\"127.0.0.1\",\"vectorAdd(float*, float*, float*, int)\",\"2020-Dec-09 14:45:41\",\"1\",\"7\",";
  const std::string csv =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\",\"Context\",\"Stream\",\"Section Name\","
      "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n" +
      prefix + "\"GPU Speed Of Light Throughput\",\"DRAM Frequency\",\"cycle/nsecond\",\"6.78\"\n" + prefix +
      "\"GPU Speed Of Light Throughput\",\"SM Frequency\",\"cycle/usecond\",\"585.94\"\n" + prefix +
      "\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"4.10\"\n" + prefix +
      "\"GPU Speed Of Light Throughput\",\"Memory [%]\",\"%\",\"12.34\"\n" + prefix +
      "\"Occupancy\",\"Achieved Occupancy\",\"%\",\"45.60\"\n" + prefix +
      "\"Memory Workload Analysis\",\"Memory Throughput\",\"Gbyte/second\",\"250.50\"\n";
  auto report = ncu::parse_ncu_csv(csv, "old.csv");
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->kernels.size(), 1u);
  const auto& k = report->kernels[0];
  EXPECT_EQ(k.join_name, "vectorAdd");
  EXPECT_FALSE(k.grid);
  EXPECT_DOUBLE_EQ(*k.duration_ns, 4100.0);           // 4.10 us
  EXPECT_DOUBLE_EQ(*k.sm_clock_hz, 585.94e6);         // 585.94 cycles per us
  EXPECT_DOUBLE_EQ(*k.memory_throughput_pct, 12.34);
  EXPECT_DOUBLE_EQ(*k.achieved_occupancy_pct, 45.6);
  ASSERT_TRUE(k.dram_bytes);
  EXPECT_DOUBLE_EQ(*k.dram_bytes, 250.5e9 * 4.1e-6);  // 250.50 GB/s for 4.10 us, rounded by ncu: inexact
  EXPECT_FALSE(k.dram_bytes_exact);
}
