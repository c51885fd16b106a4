// The roofline's ncu and cublas-log providers on the H100 fixtures (tests/fixtures/ncu): an ncu CSV
// opened as a trace, work joined from the cuBLASLt log and from an ncu export with FLOP counters.
// Expected FLOPs and bytes by hand: 2·4096^3 = 137,438,953,472; the 4096^3 bf16 product's operands
// 3·4096²·2 = 100,663,296 bytes; 2·8·4096·14336 = 939,524,096.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "analyses/work/kernel_work.hpp"
#include "kernscope/open.hpp"
#include "readers/ncu/ncu_report.hpp"
#include "readers/ncu/ncu_trace.hpp"
#include "../support/ncu_fixtures.hpp"

namespace {

std::string fixture(const std::string& name) { return kernscope::testing::ncu_fixture(name); }

kernscope::Trace ncu_trace(const std::string& name) {
  return kernscope::testing::expect_value(kernscope::open_trace(fixture(name)));
}

// A note of `kind` that says `part`.
bool has_note(const kernscope::WorkTable& t, const std::string& kind, const std::string& part) {
  return std::ranges::any_of(t.notes(), [&](const kernscope::Note& n) { return n.kind == kind && n.text.find(part) != std::string::npos; });
}

}  // namespace

TEST(NcuTrace, CsvOpensAsATraceOfItsLaunches) {
  const auto trace = ncu_trace("dev1_raw_base.csv.gz");
  EXPECT_EQ(trace.source.format, "ncu-csv");
  ASSERT_EQ(trace.kernels.size(), 3u);
  // Laid end to end: ncu's durations 176,384 + 44,608 + 44,288 ns.
  EXPECT_EQ(trace.kernels.start_ns[0], 0);
  EXPECT_EQ(trace.kernels.end_ns[0], 176384);
  EXPECT_EQ(trace.kernels.start_ns[1], 176384);
  EXPECT_EQ(trace.kernels.end_ns[2], 176384 + 44608 + 44288);
  EXPECT_EQ(trace.kernels.stream_id[0], 7u);
  EXPECT_EQ(trace.kernels.grid_y[0], 66);
  EXPECT_EQ(trace.kernels.block_x[0], 384);
  EXPECT_EQ(trace.kernels.registers_per_thread[0], 168);
  EXPECT_EQ(trace.strings.get(trace.kernels.short_name[2]), "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT");
  ASSERT_EQ(trace.devices.size(), 1u);
  const auto& d = trace.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.l2_cache_bytes, 52428800);
  EXPECT_EQ(d.clock_rate_hz, 1980000000);
  EXPECT_EQ(d.memory_bandwidth_bytes_per_s, 3352320000000);  // 2 x 2,619,000 kHz x 5120 bit / 8
  EXPECT_EQ(d.compute_major, 9);
  EXPECT_FALSE(trace.notes.empty());
  // The details page opens too (its device comes from the CC column only).
  const auto details = ncu_trace("dev1_det.csv.gz");
  EXPECT_EQ(details.kernels.size(), 2u);
  EXPECT_EQ(details.devices.at(0).compute_major, 9);
}

TEST(WorkProviders, CublasLogGivesTheGemmKernelsTheirShapes) {
  const auto trace = ncu_trace("dev1_raw_base.csv.gz");
  auto table = kernscope::collect_kernel_work(trace, {{"cublas-log", fixture("dev1_cublaslt2.log.gz")}});
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->covered(), 3u);
  const auto* square = table->find(0);
  ASSERT_NE(square, nullptr);
  EXPECT_EQ(square->source, kernscope::kSourceCublasLog);
  EXPECT_EQ(square->flops[static_cast<std::size_t>(kernscope::Precision::kBf16)], 137438953472.0);
  EXPECT_EQ(square->bytes, 100663296.0);
  EXPECT_EQ(square->bytes_kind, kernscope::BytesKind::kMinimum);
  EXPECT_EQ(table->find(1)->total_flops(), 939524096.0);
  EXPECT_NE(table->find(1)->detail.find("EPILOGUE_BIAS"), std::string::npos);
  EXPECT_TRUE(has_note(*table, "gemm_calls_joined", "cublas-log: 3 of 3 GEMM call(s)"));
}

TEST(WorkProviders, NcuWithoutFlopCountersLeavesKernelsToOthers) {
  const auto trace = ncu_trace("dev1_raw_base.csv.gz");
  auto table = kernscope::collect_kernel_work(trace, {{"ncu", fixture("dev1_raw_base.csv.gz")}});
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_EQ(table->covered(), 0u);
  EXPECT_TRUE(has_note(*table, "launches_without_flops", "ncu: 3 joined launch(es) have no FLOP counter"));
  // ... and why, from the export's own kernels: tensor instructions counted, no tensor FLOP counter.
  EXPECT_TRUE(has_note(*table, "launches_without_flops", "(tensor-pipe instructions were counted"));
  // With the cuBLASLt log beside it: the log's FLOPs, ncu's measured bytes (read + write, from the CSV).
  auto both = kernscope::collect_kernel_work(
      trace, {{"ncu", fixture("dev1_raw_base.csv.gz")}, {"cublas-log", fixture("dev1_cublaslt2.log.gz")}});
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_EQ(both->covered(), 3u);
  const auto* gemm = both->find(0);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->source, kernscope::kSourceNcu);
  EXPECT_EQ(gemm->bytes_kind, kernscope::BytesKind::kMeasured);
  EXPECT_EQ(gemm->bytes, 150471168.0 + 28167936.0);
  EXPECT_EQ(gemm->flops[static_cast<std::size_t>(kernscope::Precision::kBf16)], 137438953472.0);
  EXPECT_EQ(both->find(2)->bytes, 117554944.0 + 2457344.0);
  EXPECT_EQ(both->find(2)->total_flops(), 939524096.0);
  EXPECT_TRUE(has_note(*both, "flops_from_cublas_log", "ncu: 3 launch(es) without FLOP counters took their FLOPs from the cuBLAS log"));
  // ncu's other measurements travel in the detail (SM 89.95 %, L2 hit 74.38 % from the CSV).
  EXPECT_NE(gemm->detail.find("SM 89.95 %"), std::string::npos) << gemm->detail;
  EXPECT_NE(gemm->detail.find("L2 hit 74.38 %"), std::string::npos) << gemm->detail;
}

TEST(WorkProviders, NcuCountersGiveMeasuredWork) {
  // An export with FLOP counters: one bf16 GEMM (aggregate tensor counter) and its DRAM bytes.
  const std::string path = (std::filesystem::temp_directory_path() / "kernscope_ncu_work_test.csv").string();
  {
    std::ofstream out(path);
    out << "\"ID\",\"Process ID\",\"Kernel Name\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\","
           "\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\"\n"
           "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"ns\",\"byte\",\"byte\",\"\"\n"
           "\"0\",\"9\",\"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT\",\"7\",\"(384, 1, 1)\",\"(2, 66, 1)\",\"0\",\"9.0\","
           "\"176,384\",\"150,471,168\",\"28,167,936\",\"137,438,953,472\"\n";
  }
  const auto trace = ncu_trace("dev1_raw_base.csv.gz");
  auto table = kernscope::collect_kernel_work(trace, {{"ncu", path}, {"cublas-log", fixture("dev1_cublaslt2.log.gz")}});
  std::filesystem::remove(path);
  ASSERT_TRUE(table) << table.error().message;
  const auto* gemm = table->find(0);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->source, kernscope::kSourceNcu);  // measured beats the log
  EXPECT_EQ(gemm->bytes_kind, kernscope::BytesKind::kMeasured);
  EXPECT_EQ(gemm->bytes, 150471168.0 + 28167936.0);
  EXPECT_EQ(gemm->flops[static_cast<std::size_t>(kernscope::Precision::kBf16)], 137438953472.0);
  EXPECT_EQ(table->find(1)->source, kernscope::kSourceCublasLog);  // not profiled: the log's shapes
  EXPECT_TRUE(has_note(*table, "profiled_launches_joined", "ncu: 1 of 1 profiled launch(es)"));
  // The log's GEMM that ncu had measured already: counted among the kernels a more trusted source gave.
  EXPECT_TRUE(has_note(*table, "work_already_given", "cublas-log: 1 kernel(s) already had work from a more trusted source"));
  // A file that is not an ncu CSV is an error, not an empty result.
  auto bad = kernscope::collect_kernel_work(trace, {{"ncu", fixture("dev1_cublaslt2.log.gz")}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not an Nsight Compute CSV"), std::string::npos);
}
