// nsys's gap and utilisation rules on small traces whose answers follow by construction.
#include <gtest/gtest.h>

#include "kernscope/analyze.hpp"
#include "support/findings.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

using testing::rule;

TEST(GpuGaps, OverlappingKernelsHideGapsAndThresholdIsStrict) {
  testing::SyntheticTrace s;
  const TimeNs ms = 1'000'000;
  s.kernel("a", 1 * ms, 100 * ms);
  s.kernel("b", 50 * ms, 200 * ms);     // overlaps a: no gap between them
  s.kernel("c", 900 * ms, 901 * ms);    // 700 ms after b ends: a gap
  s.kernel("d", 1401 * ms, 1402 * ms);  // exactly 500 ms after c: not more than the threshold
  const auto findings = run_nsys_rules(s.trace, AnalyzeOptions{});
  const auto& gaps = rule(findings, "gpu_gaps");
  ASSERT_EQ(gaps.count, 1);
  EXPECT_EQ(std::get<std::int64_t>(gaps.rows.rows[0][1]), 700 * ms);
  EXPECT_EQ(std::get<std::int64_t>(gaps.rows.rows[0][2]), 200 * ms);
  AnalyzeOptions small;
  small.gap_ms = 100;
  EXPECT_EQ(rule(run_nsys_rules(s.trace, small), "gpu_gaps").count, 2);
}

TEST(GpuTimeUtil, RegionsOfLowUseAreMergedAndAveraged) {
  testing::SyntheticTrace s;
  // Span 1000..4000 ns in 3 chunks of 1000: busy 100 %, then 10 %, then 30 %.
  s.kernel("full", 1000, 2000);
  s.kernel("x", 2000, 2100);
  s.kernel("y", 3000, 3300);
  s.kernel("end", 3999, 4000);  // +0.1 % in the last chunk
  AnalyzeOptions o;
  o.utilization_chunks = 3;
  const auto findings = run_nsys_rules(s.trace, o);
  const auto& util = rule(findings, "gpu_time_util");
  ASSERT_EQ(util.count, 1);
  const auto& row = util.rows.rows[0];
  EXPECT_DOUBLE_EQ(std::get<double>(row[1]), 20.1);       // (10 + 30.1) / 2
  EXPECT_EQ(std::get<std::int64_t>(row[2]), 2000);        // two chunks merged
  EXPECT_EQ(std::get<std::int64_t>(row[3]), 2000);
}

TEST(ApiSync, CountsEveryCallButKeepsTopRows) {
  testing::SyntheticTrace s;
  for (int i = 0; i < 60; ++i) s.api("cudaStreamSynchronize_v3020", i * 1000, i * 1000 + i + 1, i);
  s.api("cudaDeviceSynchronize_v3020", 100'000, 100'500, 99);
  s.api("cudaLaunchKernel_v7000", 200'000, 200'010, 100);
  const auto findings = run_nsys_rules(s.trace, AnalyzeOptions{});
  const auto& f = rule(findings, "cuda_api_sync");
  EXPECT_EQ(f.count, 61);
  ASSERT_EQ(f.rows.rows.size(), 50u);
  EXPECT_EQ(std::get<std::int64_t>(f.rows.rows[0][0]), 500);  // longest first
}

TEST(AnalyzeOptions, Validated) {
  AnalyzeOptions o;
  EXPECT_TRUE(validate(o));  // the defaults (nsys analyze's) pass: the rejections below are not blanket
  o.utilization_chunks = 0;
  EXPECT_FALSE(validate(o));
  o.utilization_chunks = 30;
  o.utilization_threshold = 101;
  EXPECT_FALSE(validate(o));
}

}  // namespace
}  // namespace kernscope
