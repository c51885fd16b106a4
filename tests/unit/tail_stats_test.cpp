// Tail statistics checked against hand-computed values (and numpy's documented percentile method).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "kernscope/open.hpp"
#include "analyses/tail.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

TEST(PercentileLinear, MatchesNumpyDefault) {
  // numpy.percentile([1, 2, 3, 4], q): rank = q/100 * 3, interpolated.
  const std::vector<std::int64_t> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_linear(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile_linear(v, 95), 3.85);
  EXPECT_DOUBLE_EQ(percentile_linear(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_linear(v, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile_linear({7}, 99), 7.0);
}

TEST(TailStatistics, OneToHundred) {
  testing::SyntheticTrace s;
  for (int d = 100; d >= 1; --d) s.kernel("ramp", 1000 * d, 1000 * d + d);
  auto r = tail_statistics(s.trace, TailSubject::kKernel).value();
  ASSERT_EQ(r.by_total.size(), 1u);
  const auto& row = r.by_total[0];
  EXPECT_EQ(row.count, 100);
  EXPECT_EQ(row.total_ns, 5050);
  EXPECT_DOUBLE_EQ(row.mean_ns, 50.5);
  EXPECT_NEAR(row.stdev_ns, std::sqrt((100.0 * 100.0 - 1.0) / 12.0), 1e-9);  // population
  EXPECT_DOUBLE_EQ(row.p50_ns, 50.5);
  EXPECT_NEAR(row.p95_ns, 95.05, 1e-9);
  EXPECT_NEAR(row.p99_ns, 99.01, 1e-9);
  EXPECT_EQ(row.max_ns, 100);
  EXPECT_NEAR(row.tail_score, 100 * std::log2(101.0) * (100 / 50.5), 1e-6);
  // max/p50 = 1.98 (not above 2), p99/p50 = 1.96 (above 1.5).
  EXPECT_EQ(row.flags, std::vector<std::string>{"systematic-tail"});
}

// What report's page draws per kernel: every duration, ascending, and numpy's linear percentiles of
// them, for the first `limit` names in the rows' order; a name no kernel carries is left out.
TEST(DurationDistributions, EveryDurationOfTheTopNamesWithTheirPercentiles) {
  testing::SyntheticTrace s;
  for (int d : {40, 10, 30, 20}) s.kernel("b", 1000 * d, 1000 * d + d);  // 10, 20, 30, 40 once sorted
  s.kernel("a", 0, 7);
  s.kernel("c", 500, 505);
  std::vector<TailRow> rows(4);
  rows[0].name = "b";
  rows[1].name = "nowhere";  // no kernel has it
  rows[2].name = "a";
  rows[3].name = "c";        // past the limit
  const auto out = duration_distributions(s.trace, rows, 3);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "b");
  EXPECT_EQ(out[0].sorted_ns, (std::vector<std::int64_t>{10, 20, 30, 40}));
  // numpy.percentile([10, 20, 30, 40], q): rank q/100 * 3, interpolated.
  EXPECT_DOUBLE_EQ(out[0].p25, 17.5);
  EXPECT_DOUBLE_EQ(out[0].p50, 25.0);
  EXPECT_DOUBLE_EQ(out[0].p75, 32.5);
  EXPECT_DOUBLE_EQ(out[0].p95, 38.5);
  EXPECT_DOUBLE_EQ(out[0].p99, 39.7);
  EXPECT_EQ(out[1].name, "a");
  EXPECT_EQ(out[1].sorted_ns, (std::vector<std::int64_t>{7}));
  EXPECT_DOUBLE_EQ(out[1].p99, 7.0);
}

TEST(TailStatistics, FlagsOutliersAndRareBlockers) {
  testing::SyntheticTrace s;
  for (int i = 0; i < 1000; ++i) s.kernel("steady", i * 100'000, i * 100'000 + 10'000);  // 10 ms total
  // 999 invocations of 10 ns and one of 50 us: p50 = p99 = 10 (rank 989.01 falls between two 10s),
  // total 59,990 ns = 0.6 % of all time.
  for (int i = 0; i < 999; ++i) s.kernel("spiky", i * 100'000 + 50'000, i * 100'000 + 50'010);
  s.kernel("spiky", 200'000'000, 200'000'000 + 50'000);
  auto r = tail_statistics(s.trace, TailSubject::kKernel).value();
  ASSERT_EQ(r.by_tail_score.front().name, "spiky");
  const auto& spiky = r.by_tail_score.front();
  EXPECT_LT(spiky.share_of_total, 0.01);
  EXPECT_NE(std::find(spiky.flags.begin(), spiky.flags.end(), "outliers"), spiky.flags.end());
  EXPECT_NE(std::find(spiky.flags.begin(), spiky.flags.end(), "rare-blocker"), spiky.flags.end());
  EXPECT_EQ(std::find(spiky.flags.begin(), spiky.flags.end(), "systematic-tail"), spiky.flags.end());
  EXPECT_DOUBLE_EQ(spiky.p99_ns, 10.0);
  EXPECT_EQ(r.by_total.front().name, "steady");
  EXPECT_TRUE(r.by_total.front().flags.empty());
}

TEST(TailStatistics, ApiFlagsAllocationAndSync) {
  testing::SyntheticTrace s;
  s.api("cudaMalloc_v3020", 0, 100, 1);
  s.api("cudaStreamSynchronize_v3020", 200, 300, 2);
  auto r = tail_statistics(s.trace, TailSubject::kApi).value();
  // One row per call name (version suffix dropped), each with exactly its own flag: one call each,
  // so no outlier or tail flag, and each holds half the time, so neither is a rare blocker.
  std::map<std::string, std::vector<std::string>> flags_by_name;
  for (const auto& row : r.by_total) flags_by_name[row.name] = row.flags;
  EXPECT_EQ(flags_by_name, (std::map<std::string, std::vector<std::string>>{
                               {"cudaMalloc", {"allocation"}}, {"cudaStreamSynchronize", {"synchronization"}}}));
}

TEST(TailStatistics, ApiBacktracedCallCountsOnce) {
  // nsys --cudabacktrace: the backtrace record (0..100) and, inside it, the call itself (10..90),
  // one correlation id; then a call without a backtrace. Two calls: 100 + 30 ns.
  testing::SyntheticTrace s;
  s.api("cudaLaunchKernel", 0, 100, 5);
  s.api("cudaLaunchKernel_v7000", 10, 90, 5);
  s.api("cudaLaunchKernel_v7000", 200, 230, 6);
  auto r = tail_statistics(s.trace, TailSubject::kApi).value();
  ASSERT_EQ(r.by_total.size(), 1u);
  EXPECT_EQ(r.by_total[0].count, 2);
  EXPECT_EQ(r.by_total[0].total_ns, 130);
  EXPECT_EQ(r.by_total[0].max_ns, 100);
}

TEST(TailStatistics, ApiOnABacktracedExportMatchesSqlite) {
  // sqlite3 on the export: 36,610 runtime rows whose name is cudaLaunchKernel up to the version
  // suffix, 34,645 distinct correlation ids (1,965 backtrace records, eventClass 67, each enclosing
  // its cudaLaunchKernel_v7000 row); the rows no same-id row encloses sum to 234,325,681 ns, max
  // 365,836. cudaDeviceSynchronize: 4 rows, 2 calls, 51,020 ns.
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_pysample_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  auto r = tail_statistics(*trace, TailSubject::kApi).value();
  std::map<std::string, TailRow> rows;
  for (const auto& row : r.by_total) rows[row.name] = row;
  EXPECT_EQ(rows["cudaLaunchKernel"].count, 34'645);
  EXPECT_EQ(rows["cudaLaunchKernel"].total_ns, 234'325'681);
  EXPECT_EQ(rows["cudaLaunchKernel"].max_ns, 365'836);
  EXPECT_EQ(rows["cudaDeviceSynchronize"].count, 2);
  EXPECT_EQ(rows["cudaDeviceSynchronize"].total_ns, 51'020);
}

TEST(TailTable, HeadersCarryUnits) {
  testing::SyntheticTrace s;
  s.kernel("k", 0, 10);
  auto r = tail_statistics(s.trace, TailSubject::kKernel).value();
  const Table t = tail_table(r.by_total, TailSubject::kKernel, false, 0);
  std::vector<std::string> names;
  for (const auto& c : t.columns) names.push_back(c.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "P50"), names.end());
  EXPECT_EQ(t.columns[5].unit, Unit::kDuration);
  EXPECT_NE(std::find(names.begin(), names.end(), "Tail Score"), names.end());
}

}  // namespace
}  // namespace kernscope
