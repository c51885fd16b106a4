// The fleet's reduce (ranks_fleet_reduce.hpp) on digests built by hand: the ranks engine's answer is
// the one analyze_ranks gives on the same digests, and the totals and utilisation hold by
// construction. (Checked that these can fail: reading the busy bins on each rank's own clock, not the
// aligned one, moves rank 1's bins by its 2 ms offset and breaks UtilisationOnAlignedClocks; naming
// the first trace read (the lowest number) as the slowest breaks KernelAndClassTotalsAcrossTraces.)
#include <gtest/gtest.h>

#include "ranks/ranks_fleet_reduce.hpp"

namespace kernscope::ranks {
namespace {

constexpr TimeNs kOffset = 2'000'000;  // rank 1's clock reads this much later than rank 0's

// One rank's digest: 4 all-reduces 1 ms apart, each ending 50 us after its start, on a clock `offset`
// ahead of the reference; rank 1 arrives 10 us late at the third one (the others wait for it).
RankDigest rank_digest(std::int64_t rank, TimeNs offset) {
  RankDigest d;
  d.path = "rank" + std::to_string(rank) + ".json";
  d.rank = rank;
  d.declared_world_size = 2;
  for (int i = 0; i < 4; ++i) {
    Collective c;
    c.kind = CollectiveKind::kAllReduce;
    c.group = "0";
    c.seq = i;
    c.index = i;
    c.bytes = 1'000'000;
    const TimeNs nominal = 1'000'000 * (i + 1);
    c.start_ns = nominal + offset + (rank == 1 && i == 2 ? 10'000 : 0);
    c.end_ns = nominal + 60'000 + offset;
    d.collectives.items.push_back(c);
  }
  d.first_ns = 1'000'000 + offset;
  d.last_ns = 4'060'000 + offset;
  return d;
}

KernelTotals kernel(const std::string& name, const std::string& op_class, std::int64_t count, std::int64_t total, double p50) {
  KernelTotals k;
  k.name = name;
  k.op_class = op_class;
  k.count = count;
  k.total_ns = total;
  k.max_ns = total / count + 1;
  k.p50_ns = p50;
  k.p99_ns = p50 * 2;
  return k;
}

// Trace 7 holds rank 0, trace 3 rank 1 (numbers with gaps, in no order: traces that failed leave gaps).
std::vector<NumberedDigest> fleet() {
  NumberedDigest a{7, {}}, b{3, {}};
  a.digest.ranks.push_back(rank_digest(0, 0));
  b.digest.ranks.push_back(rank_digest(1, kOffset));
  a.digest.kernels = {kernel("gemm", "gemm", 10, 500, 30), kernel("attn", "attention", 2, 100, 50)};
  b.digest.kernels = {kernel("gemm", "gemm", 12, 300, 40), kernel("norm", "norm", 4, 20, 5)};
  // Bins of 1 ms from each rank's first kernel, on its own clock: rank 0 busy 400 us then 100 us;
  // rank 1 (2 ms ahead) 700 us, 0, 900 us.
  a.digest.bin_ns = b.digest.bin_ns = 1'000'000;
  a.digest.busy = {{{1'000'000, 400'000}, {2'000'000, 100'000}}};
  b.digest.busy = {{{1'000'000 + kOffset, 700'000}, {2'000'000 + kOffset, 0}, {3'000'000 + kOffset, 900'000}}};
  return {a, b};
}

TEST(FleetReduce, RanksEngineIsAnalyzeRanksOnTheDigests) {
  const FleetReduction f = reduce_fleet(fleet());
  ASSERT_EQ(f.set.ranks.size(), 2u);
  EXPECT_EQ(f.set.ranks[0].rank, 0);
  EXPECT_EQ(f.origin[0], (std::pair<std::int64_t, std::size_t>{7, 0}));
  EXPECT_EQ(f.origin[1], (std::pair<std::int64_t, std::size_t>{3, 0}));
  // The same functions `kernscope ranks` runs, on the same digests, give the same answer.
  const RanksAnalysis direct = analyze_ranks(assemble_rank_set({rank_digest(1, kOffset), rank_digest(0, 0)}));
  EXPECT_EQ(f.analysis.matching, direct.matching);
  ASSERT_EQ(f.analysis.offsets.size(), 2u);
  EXPECT_DOUBLE_EQ(f.analysis.offsets[1].offset_ns, static_cast<double>(kOffset));
  EXPECT_DOUBLE_EQ(f.analysis.offsets[1].offset_ns, direct.offsets[1].offset_ns);
  ASSERT_EQ(f.analysis.stragglers.size(), 1u);
  EXPECT_EQ(f.analysis.stragglers[0].rank, 1);
  EXPECT_EQ(f.analysis.stragglers[0].total_lead_ns, 10'000);
  EXPECT_EQ(f.analysis.stragglers[0].total_lead_ns, direct.stragglers[0].total_lead_ns);
  EXPECT_EQ(f.analysis.ranks[0].wait_ns, direct.ranks[0].wait_ns);
}

TEST(FleetReduce, KernelAndClassTotalsAcrossTraces) {
  const FleetReduction f = reduce_fleet(fleet());
  ASSERT_EQ(f.kernels.size(), 3u);
  const KernelAcross& gemm = f.kernels[0];  // 800 ns: the most
  EXPECT_EQ(gemm.name, "gemm");
  EXPECT_EQ(gemm.traces, 2);
  EXPECT_EQ(gemm.count, 22);
  EXPECT_EQ(gemm.total_ns, 800);
  EXPECT_EQ(gemm.min_trace_total_ns, 300);
  EXPECT_EQ(gemm.max_trace_total_ns, 500);
  EXPECT_EQ(gemm.slowest_trace, 7);  // not the first trace read (3)
  EXPECT_DOUBLE_EQ(gemm.median_p50_ns, 35.0);  // of 30 and 40
  EXPECT_DOUBLE_EQ(gemm.max_p99_ns, 80.0);
  EXPECT_EQ(f.kernels[1].name, "attn");
  EXPECT_EQ(f.kernels[2].name, "norm");
  ASSERT_EQ(f.classes.size(), 3u);
  EXPECT_EQ(f.classes[0].op_class, "gemm");
  EXPECT_EQ(f.classes[0].kernels, 22);
  EXPECT_EQ(f.classes[0].traces, 2);
  EXPECT_DOUBLE_EQ(f.classes[0].mean_per_trace_ns, 400.0);
  EXPECT_EQ(f.classes[2].op_class, "norm");
  EXPECT_EQ(f.classes[2].traces, 1);
}

TEST(FleetReduce, UtilisationOnAlignedClocks) {
  const FleetReduction f = reduce_fleet(fleet());
  // Aligned, both ranks' bins start at 1, 2 (and rank 1's at 3) ms: set bins 0, 1, 2.
  ASSERT_EQ(f.utilization.size(), 3u);
  EXPECT_EQ(f.utilization[0].ranks, 2);
  EXPECT_DOUBLE_EQ(f.utilization[0].mean_busy, (0.4 + 0.7) / 2);
  EXPECT_DOUBLE_EQ(f.utilization[0].min_busy, 0.4);
  EXPECT_EQ(f.utilization[0].least_busy_rank, 0);
  EXPECT_EQ(f.utilization[1].least_busy_rank, 1);  // idle there
  EXPECT_DOUBLE_EQ(f.utilization[1].mean_busy, 0.05);
  EXPECT_EQ(f.utilization[2].ranks, 1);
  EXPECT_DOUBLE_EQ(f.utilization[2].mean_busy, 0.9);
  ASSERT_EQ(f.rank_utilization.size(), 2u);
  EXPECT_DOUBLE_EQ(f.rank_utilization[0].busy_share, 0.25);  // 500 us of 2 ms
  EXPECT_DOUBLE_EQ(f.rank_utilization[1].busy_share, 1.6 / 3);
  EXPECT_DOUBLE_EQ(f.rank_utilization[1].median_bin_busy, 0.7);
  EXPECT_DOUBLE_EQ(f.rank_utilization[1].min_bin_busy, 0.0);
  EXPECT_EQ(f.rank_utilization[1].bins, 3);
}

TEST(FleetReduce, NoDigestsNoTables) {
  const FleetReduction f = reduce_fleet({});
  EXPECT_TRUE(f.set.ranks.empty());
  EXPECT_TRUE(f.kernels.empty());
  EXPECT_TRUE(f.utilization.empty());
}

}  // namespace
}  // namespace kernscope::ranks
