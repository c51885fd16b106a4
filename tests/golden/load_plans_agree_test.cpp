// The two front ends load a trace differently: the CLI reads only the tables and columns an
// analysis declares (open_for_analysis, its load plan), Python's Trace reads everything once and
// runs each analysis on it. Both must print the same thing. Here every nsys fixture goes through
// both paths for the analyses whose plan leaves columns out (analyze, report) and for stats, and
// the outputs must be equal byte for byte. The gpu_time_util Context ID once differed (1 vs 0 on
// llama_decode_h200) because the planned load did not read kernels' contextId.
// Checked to fail: with kernels' contextId read only for a detailed load again (the reader as it
// was), llama_decode_h200's analyze case fails with "Context ID": 0 planned vs 1 full, the bug seen
// in python/tests. (report's JSON has no Context ID column, so its cases pass either way.)
#include <gtest/gtest.h>

#include "kernscope/analysis.hpp"
#include "analyses/nsys/analyze.hpp"
#include "kernscope/open.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

struct Case {
  std::string fixture;
  std::string analysis;
  std::string format;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return info.param.fixture + "_" + info.param.analysis + "_" + info.param.format;
}

class LoadPlansAgree : public ::testing::TestWithParam<Case> {};

TEST_P(LoadPlansAgree, PlannedLoadEqualsFullLoad) {
  const auto path = (testing::fixtures_dir() / "nsys" / GetParam().fixture / "trace.sqlite.xz").string();
  AnalysisRequest request;
  request.analysis = GetParam().analysis;
  request.format = GetParam().format;
  auto planned = run_analysis(path, request);  // the CLI's way
  auto full = open_trace(path);                // Python's way
  ASSERT_TRUE(full) << full.error().message;
  auto from_full = run_analysis(*full, request, /*apply_filters=*/true);
  ASSERT_EQ(planned.has_value(), from_full.has_value());
  if (!planned) {
    EXPECT_EQ(planned.error().message, from_full.error().message);
    return;
  }
  EXPECT_FALSE(planned->text.empty());
  EXPECT_TRUE(planned->text == from_full->text) << "first difference at " << testing::first_difference(planned->text, from_full->text);
}

std::vector<Case> cases() {
  // llama_decode_emit_nvtx_h200 and llama_decode_pysample_h200 are the same workload as
  // llama_decode_h200 at the same size; one of the three keeps the suite's time down.
  const std::vector<std::string> fixtures = {"cloverleaf_perlmutter", "fuser_h200",          "gaps_memset_sync",
                                             "graph_tiny_kernels_h200", "llama_decode_h200",  "mordred_quadro_rtx6000",
                                             "nsysai_h100_2gpu_1s",   "nsysai_mfu_2gpu_after", "nsysai_mfu_2gpu_before"};
  std::vector<Case> out;
  for (const auto& f : fixtures) {
    out.push_back({f, "analyze", "json"});
    out.push_back({f, "report", "json"});
    out.push_back({f, "stats", "csv"});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(NsysFixtures, LoadPlansAgree, ::testing::ValuesIn(cases()), name_of);

// The Context ID of gaps_memset_sync's one low-utilization region, from both loads: nsys printed 0
// (gold/analyze.txt). By hand: `SELECT contextId, max(end) FROM CUPTI_ACTIVITY_KIND_MEMCPY` gives
// the device's last-ending operation (end 3,470,646,902, a copy in context 0); kernels and memsets,
// all in context 1, end earlier (max 3,470,451,411 and 3,470,425,523).
TEST(LoadPlansAgree, GpuTimeUtilContextIsTheLastEndingOperations) {
  const auto path = (testing::fixtures_dir() / "nsys/gaps_memset_sync/trace.sqlite.xz").string();
  AnalysisRequest request;
  request.analysis = "analyze";
  auto planned = open_for_analysis(path, request);
  auto full = open_trace(path);
  ASSERT_TRUE(planned && full);
  for (const Trace* trace : {&*planned, &*full}) {
    bool seen = false;
    for (const auto& f : run_nsys_rules(*trace, AnalyzeOptions{})) {
      if (f.rule != "gpu_time_util") continue;
      ASSERT_EQ(f.rows.rows.size(), 1u);
      EXPECT_EQ(std::get<std::int64_t>(f.rows.rows[0].back()), 0);
      seen = true;
    }
    EXPECT_TRUE(seen);
  }
}

}  // namespace
}  // namespace kernscope
