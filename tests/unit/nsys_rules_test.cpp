// nsys's gap and utilisation rules on small traces whose answers follow by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "analyses/nsys/analyze.hpp"
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

// The gaps found in one pass over the operations in start order equal nsys's pairing done the
// long way: every end and every start sorted apart, the j-th end against the (j+1)-th start, the
// Context ID of the operation whose end sorts j-th in a stable sort. Random kernels in bursts
// (gaps between bursts, overlaps and many equal ends inside them), listed in start order and
// shuffled (the out-of-order path), with each kernel's own context id so the choice among equal
// ends shows.
TEST(GpuGaps, OnePassEqualsThePairingOfSortedEndsAndStarts) {
  for (const bool shuffled : {false, true}) {
    std::mt19937_64 random(shuffled ? 21 : 20);
    struct Op {
      TimeNs start, end;
    };
    std::vector<Op> list;
    TimeNs t = 1'000'000;
    for (int burst = 0; burst < 300; ++burst) {
      t += static_cast<TimeNs>(random() % 3'000'000);  // 0-3 ms apart: about half over 1 ms
      const TimeNs round_end = t + 1000 + static_cast<TimeNs>(random() % 4) * 1000;  // equal ends
      for (int n = 1 + static_cast<int>(random() % 6); n > 0; --n) {
        const TimeNs start = t + static_cast<TimeNs>(random() % 900);
        list.push_back({start, random() % 2 ? round_end : start + 1 + static_cast<TimeNs>(random() % 5000)});
      }
      for (const Op& op : list) t = std::max(t, op.end);
    }
    std::sort(list.begin(), list.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
    if (shuffled) std::shuffle(list.begin(), list.end(), random);
    testing::SyntheticTrace s;
    for (std::size_t i = 0; i < list.size(); ++i) {
      s.kernel("k", list[i].start, list[i].end);
      s.trace.kernels.context_id.set(s.trace.kernels.size() - 1, static_cast<std::uint32_t>(i + 1));
    }
    // The long way.
    std::vector<std::size_t> by_end(list.size());
    std::iota(by_end.begin(), by_end.end(), 0);
    std::stable_sort(by_end.begin(), by_end.end(), [&](std::size_t a, std::size_t b) { return list[a].end < list[b].end; });
    std::vector<TimeNs> starts;
    for (const Op& op : list) starts.push_back(op.start);
    std::sort(starts.begin(), starts.end());
    struct Gap {
      std::int64_t duration;
      TimeNs start;
      std::int64_t context;
    };
    std::vector<Gap> expected;
    const std::int64_t threshold = 1'000'000;
    for (std::size_t j = 0; j + 1 < list.size(); ++j) {
      const TimeNs end = list[by_end[j]].end;
      if (starts[j + 1] - end > threshold && end < starts[j + 1]) {
        expected.push_back({starts[j + 1] - end, end, static_cast<std::int64_t>(by_end[j] + 1)});
      }
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [](const Gap& a, const Gap& b) { return a.duration != b.duration ? a.duration > b.duration : a.start < b.start; });
    ASSERT_GT(expected.size(), 50u);
    AnalyzeOptions o;
    o.gap_ms = 1;
    o.rows = 100'000;
    const auto& gaps = rule(run_nsys_rules(s.trace, o), "gpu_gaps");
    ASSERT_EQ(gaps.count, static_cast<std::int64_t>(expected.size()));
    for (std::size_t r = 0; r < expected.size(); ++r) {
      EXPECT_EQ(std::get<std::int64_t>(gaps.rows.rows[r][1]), expected[r].duration) << r;
      EXPECT_EQ(std::get<std::int64_t>(gaps.rows.rows[r][2]), expected[r].start) << r;
      EXPECT_EQ(std::get<std::int64_t>(gaps.rows.rows[r][5]), expected[r].context) << r;
    }
  }
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
