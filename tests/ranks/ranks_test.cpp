// The cross-rank analysis on sets built by hand, where every right answer holds by construction:
// clock offsets, arrivals, waits, transfers and stragglers are chosen, then recovered.
// (Checked that these tests can fail: with the offset estimate disabled (estimate_clocks = false
// in ExactOffsetsAndStragglers) the offsets and every lead are off by the chosen offsets; with the
// order-shift search removed (max_shift = 0) LateWindowIsShifted fails.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "ranks/collectives.hpp"
#include "ranks/ranks_fleet_digest.hpp"
#include "ranks/ranks_links.hpp"
#include "ranks/ranks_set.hpp"
#include "ranks/ranks_skew.hpp"
#include "render/ranks_render.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope::ranks {
namespace {

TEST(CollectiveNames, KindsFromFrameworkAndKernelNames) {
  EXPECT_EQ(kind_from_collective_name("allreduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(kind_from_collective_name("nccl:all_reduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(kind_from_collective_name("_allgather_base"), CollectiveKind::kAllGather);
  EXPECT_EQ(kind_from_collective_name("all_gather_into_tensor_coalesced"), CollectiveKind::kAllGather);
  EXPECT_EQ(kind_from_collective_name("reduce_scatter_tensor"), CollectiveKind::kReduceScatter);
  EXPECT_EQ(kind_from_collective_name("alltoall_base"), CollectiveKind::kAllToAll);
  EXPECT_EQ(kind_from_collective_name("nccl:all_to_all"), CollectiveKind::kAllToAll);
  EXPECT_EQ(kind_from_collective_name("broadcast"), CollectiveKind::kBroadcast);
  EXPECT_EQ(kind_from_collective_name("reduce"), CollectiveKind::kReduce);
  EXPECT_EQ(kind_from_collective_name("send"), CollectiveKind::kSendRecv);
  EXPECT_EQ(kind_from_collective_name("barrier"), CollectiveKind::kOther);
  EXPECT_EQ(kind_from_nccl_operation("AllReduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(kind_from_nccl_operation("SendRecv"), CollectiveKind::kSendRecv);
  EXPECT_EQ(kind_from_nccl_operation("Generic"), CollectiveKind::kOther);
}

TEST(CollectiveNames, BusBandwidthFactorsAreNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n.
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllReduce, 2), 1.0);
}

TEST(CollectiveNames, DtypeSizes) {
  EXPECT_EQ(dtype_bytes("Float"), 4);
  EXPECT_EQ(dtype_bytes("BFloat16"), 2);
  EXPECT_EQ(dtype_bytes("Half"), 2);
  EXPECT_EQ(dtype_bytes("f32"), 4);
  EXPECT_EQ(dtype_bytes("bf16"), 2);
  EXPECT_EQ(dtype_bytes("int8_t"), 1);
  EXPECT_EQ(dtype_bytes("Long"), 8);
  EXPECT_EQ(dtype_bytes("complex"), 0);
}

TEST(Collectives, OverlapIsCommTimeUnderComputeOnTheSameDevice) {
  testing::SyntheticTrace s;
  s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 100, 200, 1);
  s.kernel("gemm", 150, 300, 2);
  s.kernel("gemm", 160, 170, 3);  // inside the first: counted once
  s.kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", 400, 500, 4);
  auto r = collectives_of(s.trace, -1, nullptr);
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.comm_ns, 200);
  EXPECT_EQ(r.compute_ns, 150);
  EXPECT_EQ(r.overlap_ns, 50);
  EXPECT_EQ(r.items[0].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(r.items[0].algorithm, "RING");
  EXPECT_EQ(r.items[0].protocol, "LL");
  EXPECT_EQ(r.items[1].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(r.items[1].index, 1);  // one stream: one communicator, in order
  EXPECT_EQ(r.with_args, 0);
}

TEST(FleetDigest, BusyBinsAreTheUnionOfKernelsPerBin) {
  // Bins of 100 ns from 100: [100,200) holds 100..200 (100 ns) and, overlapping it, 150..300
  // adds 200..300 to the next bin only (union: counted once); 160..170 lies inside; [300,400) is
  // idle; 420..530 splits 80 + 30 across the last two bins.
  testing::SyntheticTrace s;
  s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 100, 200, 1);
  s.kernel("gemm", 150, 300, 2);
  s.kernel("gemm", 160, 170, 3);
  s.kernel("gemm", 420, 530, 4);
  const auto bins = busy_bins(s.trace, -1, 100, 100);
  ASSERT_EQ(bins.size(), 5u);
  const std::vector<std::int64_t> busy{100, 100, 0, 80, 30};
  for (std::size_t b = 0; b < bins.size(); ++b) {
    EXPECT_EQ(bins[b].start_ns, 100 + 100 * static_cast<TimeNs>(b));
    EXPECT_EQ(bins[b].busy_ns, busy[b]) << "bin " << b;
  }
  EXPECT_TRUE(busy_bins(s.trace, -1, 100, 0).empty());
}

TEST(Collectives, ArgumentsByCorrelationAndByEnclosingOperation) {
  testing::SyntheticTrace s;
  s.api("cudaLaunchKernel", 10, 20, 1);
  s.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 100, 200, 1);
  s.api("cudaLaunchKernel", 300, 310, 2);
  s.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 400, 500, 2);
  CommArgsLookup args;
  CommArgs on_kernel;
  on_kernel.collective = "allreduce";
  on_kernel.group = "7";
  on_kernel.in_elements = on_kernel.out_elements = 1000;
  on_kernel.dtype = "BFloat16";
  on_kernel.seq = 41;
  args.by_correlation.emplace_back(1, on_kernel);
  CommArgs on_op = on_kernel;
  on_op.collective = "_allgather_base";
  on_op.in_elements = 10;
  on_op.out_elements = 80;
  on_op.seq = 42;
  args.operations.push_back({290, 320, on_op});
  auto r = collectives_of(s.trace, -1, &args);
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].bytes, 2000);
  EXPECT_EQ(r.items[0].seq, 41);
  EXPECT_EQ(r.items[0].group, "7");
  EXPECT_EQ(r.items[1].kind, CollectiveKind::kAllGather);  // the arguments' name wins over the kernel's
  EXPECT_EQ(r.items[1].bytes, 160);                          // the larger side, 80 x 2 bytes
  EXPECT_EQ(r.with_args, 2);
}

// Ranks with chosen clocks: rank p's clock reads true time + offset[p]. Collective i starts at
// 1 ms * (i + 1) + 37 us * i^2 on every rank (gaps that differ, as a real run's do: a shifted pairing
// does not line up), except where a straggler is `late` by a chosen delay; every rank's kernel ends
// `transfer` after the last arrival.
struct Plan {
  std::vector<TimeNs> offset;
  std::map<int, std::pair<int, TimeNs>> late;  // collective -> (rank position, delay)
  int collectives = 6;
  TimeNs transfer = 40'000;
  std::int64_t bytes = 8'000'000;
  bool periodic = false;  // collective i at exactly 1 ms * (i + 1): a run that repeats every collective
  bool one_file = false;  // every rank in one export (one clock), else a file per rank
  std::map<int, CollectiveKind> kinds;  // collectives that are not all-reduces
  std::map<int, TimeNs> end_jitter;     // rank position -> its kernels end this much later at odd collectives, earlier at even
};

RankSet build(const Plan& plan) {
  std::vector<RankDigest> digests;
  for (std::size_t p = 0; p < plan.offset.size(); ++p) {
    RankDigest d;
    d.path = plan.one_file ? "export.sqlite" : "rank" + std::to_string(p) + ".json";
    d.rank = static_cast<std::int64_t>(p);
    d.declared_world_size = static_cast<std::int64_t>(plan.offset.size());
    for (int i = 0; i < plan.collectives; ++i) {
      const TimeNs nominal = 1'000'000 * (i + 1) + (plan.periodic ? 0 : 37'000 * i * i);
      TimeNs last = nominal;
      auto it = plan.late.find(i);
      if (it != plan.late.end()) last += it->second.second;
      Collective c;
      c.kind = plan.kinds.contains(i) ? plan.kinds.at(i) : CollectiveKind::kAllReduce;
      c.group = "0";
      c.index = i;
      c.step = i / 2;
      c.bytes = plan.bytes;
      c.start_ns = nominal + (it != plan.late.end() && it->second.first == static_cast<int>(p) ? it->second.second : 0) + plan.offset[p];
      const TimeNs jitter = plan.end_jitter.contains(static_cast<int>(p)) ? plan.end_jitter.at(static_cast<int>(p)) : 0;
      c.end_ns = last + plan.transfer + plan.offset[p] + (i % 2 == 1 ? jitter : -jitter);
      d.collectives.items.push_back(c);
    }
    d.first_ns = d.collectives.items.front().start_ns;
    d.last_ns = d.collectives.items.back().end_ns;
    digests.push_back(d);
  }
  return assemble_rank_set(digests);
}

TEST(RanksSkew, ExactOffsetsAndStragglers) {
  Plan plan;
  plan.offset = {0, 1'000'123, -500'077, 3'000'000};
  plan.late = {{1, {2, 50'000}}, {3, {2, 30'000}}, {4, {1, 7'000}}};
  const RankSet set = build(plan);
  const RanksAnalysis a = analyze_ranks(set);
  ASSERT_EQ(a.offsets.size(), 4u);
  for (std::size_t p = 0; p < 4; ++p) {
    EXPECT_DOUBLE_EQ(a.offsets[p].offset_ns, static_cast<double>(plan.offset[p])) << p;
    EXPECT_DOUBLE_EQ(a.offsets[p].spread_ns, 0.0);
    EXPECT_TRUE(a.offsets[p].trusted);
  }
  EXPECT_TRUE(a.clocks_trusted);
  ASSERT_EQ(a.collectives.size(), 6u);
  EXPECT_TRUE(a.incomplete.empty());
  // Collective 1: rank 2 arrives 50 us late; the three others wait 50 us each, rank 2 none.
  const auto& c1 = a.collectives[1];
  EXPECT_EQ(c1.last_rank, 2);
  EXPECT_EQ(c1.lead_ns, 50'000);
  EXPECT_EQ(c1.spread_ns, 50'000);
  EXPECT_EQ(c1.transfer_ns, 40'000);
  EXPECT_DOUBLE_EQ(c1.mean_wait_ns, 3 * 50'000 / 4.0);
  // busBw = bytes * 2(n-1)/n / transfer = 8e6 * 1.5 / 40e-6 s = 3e11 B/s.
  EXPECT_DOUBLE_EQ(c1.bus_bandwidth, 3e11);
  ASSERT_EQ(a.stragglers.size(), 2u);
  EXPECT_EQ(a.stragglers[0].rank, 2);
  EXPECT_EQ(a.stragglers[0].times_last, 2);
  EXPECT_EQ(a.stragglers[0].total_lead_ns, 80'000);
  EXPECT_EQ(a.stragglers[0].wait_caused_ns, 3 * 80'000);
  EXPECT_EQ(a.stragglers[1].rank, 1);
  EXPECT_EQ(a.stragglers[1].times_last, 1);
  EXPECT_EQ(a.ranks[0].wait_ns, 50'000 + 30'000 + 7'000);
  EXPECT_EQ(a.ranks[2].wait_ns, 7'000);
  ASSERT_EQ(a.kinds.size(), 1u);
  EXPECT_EQ(a.kinds[0].count, 6);
  EXPECT_EQ(a.kinds[0].transfer_ns, 6 * 40'000);
  // Steps of two collectives each: step 0 holds collective 1 (rank 2 late by 50 us), step 1
  // collective 3 (rank 2, 30 us), step 2 collective 4 (rank 1, 7 us).
  ASSERT_EQ(a.steps.size(), 3u);
  EXPECT_EQ(a.steps[0].collectives, 2);
  EXPECT_EQ(a.steps[0].top_straggler, 2);
  EXPECT_EQ(a.steps[0].max_spread_ns, 50'000);
  EXPECT_DOUBLE_EQ(a.steps[0].wait_ns, 3 * 50'000 / 4.0);
  EXPECT_EQ(a.steps[1].top_straggler, 2);
  EXPECT_EQ(a.steps[2].top_straggler, 1);
  EXPECT_EQ(a.steps[2].transfer_ns, 2 * 40'000);
}

// A delayed step's shape: rank 1 arrives 2 ms late at the first all-reduce, then rank 0 is last by
// 5 us in the seven that follow. The straggler is rank 1 (2 ms of lead against 35 us), last once.
TEST(RanksSkew, StragglerIsTheRankThatHeldTheOthersLongest) {
  auto collective = [](std::int64_t last_rank, TimeNs lead) {
    MatchedCollective m;
    m.ranks = {0, 1};
    m.last_rank = last_rank;
    m.lead_ns = lead;
    return m;
  };
  StragglerTally tally;
  tally.add(collective(1, 2'000'000), 2'000);
  for (int i = 0; i < 7; ++i) tally.add(collective(0, 5'000), 2'000);
  EXPECT_EQ(tally.top(), (std::pair<std::int64_t, std::int64_t>{1, 1}));
  // Leads under the noise count for no one; a collective seen on one rank has no straggler.
  StragglerTally quiet;
  quiet.add(collective(0, 1'000), 2'000);
  MatchedCollective alone = collective(1, 9'000'000);
  alone.ranks = {1};
  quiet.add(alone, 2'000);
  EXPECT_EQ(quiet.top(), (std::pair<std::int64_t, std::int64_t>{-1, 0}));
  // Equal leads: the rank last more often, then the lower rank.
  StragglerTally tied;
  tied.add(collective(2, 6'000), 2'000);
  tied.add(collective(1, 3'000), 2'000);
  tied.add(collective(1, 3'000), 2'000);
  EXPECT_EQ(tied.top(), (std::pair<std::int64_t, std::int64_t>{1, 2}));
}

TEST(RanksSkew, WithoutClockEstimateOffsetsBecomeSkew) {
  Plan plan;
  plan.offset = {0, 200'000};
  const RankSet set = build(plan);
  SkewOptions options;
  options.estimate_clocks = false;
  const RanksAnalysis a = analyze_ranks(set, options);
  ASSERT_FALSE(a.collectives.empty());
  EXPECT_EQ(a.collectives[0].spread_ns, 200'000);  // the clock offset reads as skew
  EXPECT_EQ(a.stragglers.size(), 1u);               // the table keeps the figures...
  // ... but taken as they are, the clocks disagree by 200 us where kernels end together: not trusted,
  // and no straggler verdict is drawn from them.
  EXPECT_FALSE(a.clocks_trusted);
  EXPECT_TRUE(a.verdicts_withheld());
  ASSERT_FALSE(a.distrust.empty());
  EXPECT_EQ(a.distrust[0].kind, "clocks_not_trusted");
  EXPECT_NE(a.distrust[0].text.find("clocks: rank 1: clocks taken as they are, but collective ends differ by 200000 ns"), std::string::npos)
      << a.distrust[0].text;
  ASSERT_EQ(a.notes.size(), 1u);
  EXPECT_EQ(a.notes[0].kind, "clocks_not_estimated");
}

// The untrusted-clock branch: rank 1's kernels end 8 us late and 8 us early by turns (its clock, or
// its ends, cannot be relied on to the 5 us trust limit). Its collectives still line up as read (each
// pair within 2 trust limits and far from the neighbours), so the matching is trusted, but not the
// clocks: that is said first and the straggler and hang verdicts are withheld, the tables keeping the
// figures.
// A clock offset from the median of a few collective ends: two in common do not make it trusted
// (one odd end would decide it), three do (by construction: rank 1 reads 1 ms ahead, exactly).
TEST(RanksTrust, AnOffsetNeedsThreeCollectivesInCommon) {
  for (int collectives : {2, 3}) {
    Plan plan;
    plan.offset = {0, 1'000'000};
    plan.collectives = collectives;
    const RanksAnalysis a = analyze_ranks(build(plan));
    ASSERT_EQ(a.offsets.size(), 2u);
    EXPECT_EQ(a.offsets[1].samples, collectives);
    EXPECT_DOUBLE_EQ(a.offsets[1].offset_ns, 1'000'000.0) << collectives;
    EXPECT_EQ(a.offsets[1].trusted, collectives >= 3) << collectives << ": " << a.offsets[1].why;
    EXPECT_EQ(a.clocks_trusted, collectives >= 3) << collectives;
    if (collectives < 3) {
      EXPECT_EQ(a.offsets[1].why, "fewer than 3 collectives in common");
      EXPECT_TRUE(a.verdicts_withheld());
    }
  }
}

TEST(RanksTrust, UntrustedClocksWithholdVerdicts) {
  Plan plan;
  plan.offset = {0, 0, 0};
  plan.late = {{2, {2, 50'000}}};
  plan.end_jitter = {{1, 8'000}};
  RankSet set = build(plan);
  set.ranks[2].collectives.items.pop_back();  // rank 2 never launches the last one, its trace goes on
  set.ranks[2].last_ns += 10'000'000;
  const RanksAnalysis a = analyze_ranks(set);
  EXPECT_TRUE(a.matching_trusted) << (a.distrust.empty() ? "" : a.distrust[0].text);
  EXPECT_FALSE(a.clocks_trusted);
  EXPECT_FALSE(a.offsets[1].trusted);
  EXPECT_TRUE(a.verdicts_withheld());
  ASSERT_EQ(a.distrust.size(), 1u);
  EXPECT_NE(a.distrust[0].text.find("clocks: rank 1: collective ends scatter by 8000 ns"), std::string::npos) << a.distrust[0].text;
  // The figures stay: rank 2 last by 50 us at collective 2; the missing collective is listed, unjudged.
  ASSERT_FALSE(a.stragglers.empty());
  EXPECT_EQ(a.stragglers[0].rank, 2);
  ASSERT_EQ(a.incomplete.size(), 1u);
  EXPECT_EQ(a.incomplete[0].missing_why, std::vector<std::string>{"missing within its window (untrusted: no verdict)"});
  std::string notes;
  for (const auto& n : a.notes) notes += n.kind + ": " + n.text + "\n";
  EXPECT_EQ(notes.find("did not arrive"), std::string::npos) << notes;
  EXPECT_NE(notes.find("missing_collectives_unjudged: 1 time(s) a rank lacks a collective"), std::string::npos) << notes;
  const std::string text = ranks_text(set, a);
  EXPECT_EQ(text.substr(text.find('\n') + 1, 11), "NOT TRUSTED") << text;
  EXPECT_NE(text.find("Stragglers: withheld"), std::string::npos) << text;
  EXPECT_EQ(text.find("last in "), std::string::npos) << text;
  EXPECT_EQ(text.find("did not arrive"), std::string::npos) << text;
  const auto tables = ranks_tables(set, a);
  for (const auto& t : tables) {
    if (t.report != "stragglers" && t.report != "incomplete") continue;
    ASSERT_EQ(t.columns.back().name, "Trusted");
    for (const auto& row : t.rows) EXPECT_EQ(std::get<std::string>(row.back()), "no: clocks") << t.report;
  }
  EXPECT_NE(ranks_json(set, a, TimeUnit::kNs).find("\"verdicts_withheld\": true"), std::string::npos);
}

// A shift is taken only where the pairs agree on what they were. Twelve collectives exactly 1 ms apart
// (their ends line up at any shift), 6 of them marked (2, 3, 4, 6, 8 and 9: a pattern that does not
// repeat) by their kind (all-gather, else all-reduce), their size (4 MB, else 8 MB) or their dtype
// (f32, else bf16); rank 1's clock reads 5.3 ms ahead (its own file) and its window starts 2
// collectives later. Only shift 2 pairs marked with marked on 8 pairs or more.
TEST(RanksMatching, AShiftThatMakesKindsOrSizesDisagreeIsRefused) {
  const std::set<std::int64_t> marked = {2, 3, 4, 6, 8, 9};
  for (const std::string mark : {"kind", "size", "dtype"}) {
    Plan plan;
    plan.offset = {0, 5'300'000};
    plan.collectives = 12;
    plan.periodic = true;
    RankSet set = build(plan);
    for (auto& r : set.ranks) {
      for (auto& c : r.collectives.items) {
        const bool m = marked.contains(c.index);
        if (mark == "kind" && m) c.kind = CollectiveKind::kAllGather;
        if (mark == "size" && m) c.bytes = 4'000'000;
        if (mark == "dtype") c.dtype = m ? "f32" : "bf16";
      }
    }
    auto& items = set.ranks[1].collectives.items;
    items.erase(items.begin(), items.begin() + 2);
    set.ranks[1].first_ns = items.front().start_ns;
    const RanksAnalysis a = analyze_ranks(set);
    EXPECT_TRUE(a.matching_trusted) << mark << ": " << (a.distrust.empty() ? "" : a.distrust[0].text);
    ASSERT_EQ(a.collectives.size(), 10u) << mark;
    for (const auto& m : a.collectives) EXPECT_FALSE(m.kinds_differ) << mark << " " << m.index;
    ASSERT_FALSE(a.windows.empty()) << mark;
    EXPECT_EQ(a.windows[0].text, "rank 1, 0: its trace starts 2 collective(s) later than the reference's (matched by order with that shift)");
    EXPECT_EQ(a.windows[0].kind, "window_shifted");
    EXPECT_EQ(a.windows[0].severity, NoteSeverity::kDataLoss);
    EXPECT_EQ(a.windows[0].count, 2);
    EXPECT_DOUBLE_EQ(a.offsets[1].offset_ns, 5'300'000.0);
  }
}

// Matched by sequence number, ranks' records of one collective must still agree: rank 1's trace says
// collective 3 was an all-gather where rank 0's says all-reduce. The traces' identities disagree:
// the matching is not trusted.
TEST(RanksMatching, SequenceNumbersThatPairDifferentCallsAreDoubted) {
  Plan plan;
  plan.offset = {0, 1'000};
  RankSet set = build(plan);
  for (auto& r : set.ranks) {
    for (auto& c : r.collectives.items) c.seq = c.index;
  }
  set.ranks[1].collectives.items[3].kind = CollectiveKind::kAllGather;
  const RanksAnalysis a = analyze_ranks(set);
  EXPECT_EQ(a.matching, "by identity: communicator and sequence number from the traces");
  EXPECT_FALSE(a.matching_trusted);
  EXPECT_TRUE(a.verdicts_withheld());
  ASSERT_FALSE(a.distrust.empty());
  EXPECT_EQ(a.distrust[0].text, "matching: 1 matched collective(s) differ in kind or size across ranks (the traces' sequence numbers disagree)");
  EXPECT_EQ(a.distrust[0].kind, "matching_not_trusted");
}

// A periodic run (every collective 1 ms after the last) whose rank 1 window starts 3 collectives later.
// In one export, one clock: the ends say which shift is right (3). In a file per rank, rank 1's clock
// ahead, the windows line up at other shifts too: not trusted, verdicts withheld, whether every shift
// lines up alike after a fitted offset (5.3 ms ahead: ambiguous), a delayed collective leaves one
// shift standing while the run still repeats every collective (self-similar), or the clock is ahead
// by a whole number of periods (5 ms: shift 8 lines up as read).
TEST(RanksMatching, PeriodicWindowsLineUpInOneExportNotAcrossFiles) {
  auto set_of = [](bool one_file, bool delayed, TimeNs ahead = 0) {
    Plan plan;
    plan.offset = {0, ahead};
    plan.collectives = 14;
    plan.periodic = true;
    plan.one_file = one_file;
    if (delayed) plan.late = {{8, {1, 200'000}}};  // rank 1 200 us late; both end 200 us later
    RankSet set = build(plan);
    auto& items = set.ranks[1].collectives.items;
    items.erase(items.begin(), items.begin() + 3);
    set.ranks[1].first_ns = items.front().start_ns;
    return set;
  };
  {
    const RankSet set = set_of(true, true);
    const RanksAnalysis a = analyze_ranks(set);
    EXPECT_TRUE(a.matching_trusted) << (a.distrust.empty() ? "" : a.distrust[0].text);
    EXPECT_FALSE(a.verdicts_withheld());
    EXPECT_EQ(a.collectives.size(), 11u);
    ASSERT_EQ(a.stragglers.size(), 1u);
    EXPECT_EQ(a.stragglers[0].rank, 1);
    EXPECT_EQ(a.stragglers[0].total_lead_ns, 200'000);
    EXPECT_NE(ranks_text(set, a).find("rank    1: last in 1 of 11 collectives"), std::string::npos);
  }
  const std::vector<std::tuple<bool, TimeNs, std::string>> across = {
      {false, 5'300'000, "shifts 0 and -1 both line its collectives up"},
      {true, 5'300'000, "line up with shift 3 after a clock offset fitted to them, but the run repeats every"},
      {false, 5'000'000, "line up with shift 8 as the clocks read, but the run repeats every"}};
  for (const auto& [delayed, ahead, why] : across) {
    const RankSet set = set_of(false, delayed, ahead);
    const RanksAnalysis a = analyze_ranks(set);
    EXPECT_FALSE(a.matching_trusted) << why;
    EXPECT_TRUE(a.verdicts_withheld());
    ASSERT_FALSE(a.distrust.empty());
    EXPECT_TRUE(a.distrust[0].text.starts_with("matching: rank 1, 0: ")) << a.distrust[0].text;
    EXPECT_NE(a.distrust[0].text.find(why), std::string::npos) << a.distrust[0].text;
    const std::string text = ranks_text(set, a);
    EXPECT_EQ(text.find("last in "), std::string::npos) << text;
    EXPECT_NE(text.find("Stragglers: withheld"), std::string::npos) << text;
  }
}

TEST(RanksSkew, LateWindowIsShifted) {
  Plan plan;
  plan.offset = {0, 2'000'000, 7'000};
  plan.late = {{0, {1, 10'000}}, {2, {1, 90'000}}, {5, {2, 20'000}}};
  plan.collectives = 12;  // 10 pairs after the shift: a shift across files is taken on 8 or more
  RankSet set = build(plan);
  // Rank 1's window starts two collectives later: its first two are not in its trace.
  auto& items = set.ranks[1].collectives.items;
  items.erase(items.begin(), items.begin() + 2);
  for (auto& c : items) c.index -= 2;
  set.ranks[1].first_ns = items.front().start_ns;
  const RanksAnalysis a = analyze_ranks(set);
  EXPECT_TRUE(a.matching_trusted) << (a.distrust.empty() ? "" : a.distrust[0].text);
  EXPECT_FALSE(a.verdicts_withheld());
  EXPECT_DOUBLE_EQ(a.offsets[1].offset_ns, 2'000'000.0);
  ASSERT_EQ(a.collectives.size(), 10u);
  ASSERT_EQ(a.incomplete.size(), 2u);
  EXPECT_EQ(a.incomplete[0].missing_why, std::vector<std::string>{"its trace starts after"});
  EXPECT_EQ(a.collectives[0].last_rank, 1);  // collective 2, rank 1 late by 90 us
  EXPECT_EQ(a.collectives[0].lead_ns, 90'000);
}

TEST(RanksSkew, HangNamesTheRankThatDidNotArrive) {
  Plan plan;
  plan.offset = {0, 0, 0};
  RankSet set = build(plan);
  auto& items = set.ranks[2].collectives.items;
  items.pop_back();  // never launched the last one, while its trace goes on
  set.ranks[2].last_ns += 10'000'000;
  const RanksAnalysis a = analyze_ranks(set);
  ASSERT_EQ(a.incomplete.size(), 1u);
  EXPECT_EQ(a.incomplete[0].missing, std::vector<std::size_t>{2});
  EXPECT_EQ(a.incomplete[0].missing_why, std::vector<std::string>{"did not arrive"});
  bool said = false;
  for (const auto& n : a.notes) {
    said = said || (n.kind == "rank_did_not_arrive" && n.count == 1 && n.text.find("rank 2 did not arrive at 1 collective") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

TEST(RankSet, MissingDuplicateAndMixedRuns) {
  std::vector<RankDigest> d(3);
  d[0].path = "a.json", d[0].rank = 0, d[0].declared_world_size = 8;
  d[1].path = "b.json", d[1].rank = 3, d[1].declared_world_size = 8;
  d[2].path = "c.json", d[2].rank = 3, d[2].declared_world_size = 2;
  // A rank's own notes: the set passes on a cut trace (by its kind), not what the trace lacks.
  d[0].notes = {{"no_nccl_kernels", NoteSeverity::kInfo, "no NCCL kernels"}};
  d[2].notes = {{"cut_short", NoteSeverity::kDataLoss, "the trace is cut short (its program was killed?)"}};
  const RankSet set = assemble_rank_set(d);
  EXPECT_EQ(set.world_size, 8);
  std::string all;
  for (const auto& n : set.notes) all += n.kind + " " + std::string(severity_name(n.severity)) + " " + std::to_string(n.count) + ": " + n.text + "\n";
  EXPECT_NE(all.find("rank_claimed_twice info 2: mixed runs? rank 3 is claimed by 2 traces"), std::string::npos) << all;
  EXPECT_NE(all.find("world_sizes_differ info 1: mixed runs: the traces declare different world sizes (2, 8)"), std::string::npos) << all;
  EXPECT_NE(all.find("missing_ranks data_loss 6: missing ranks: 1, 2, 4, 5, 6, 7"), std::string::npos) << all;
  EXPECT_NE(all.find("cut_short data_loss 1: rank 3: the trace is cut short (its program was killed?)"), std::string::npos) << all;
  EXPECT_EQ(all.find("NCCL"), std::string::npos) << all;
}

TEST(RankSet, RankEvidenceOrder) {
  // No distributedInfo: distinct device ids number the ranks; equal ones fall to file names, then order.
  std::vector<RankDigest> by_device(2);
  by_device[0].path = "x.sqlite", by_device[0].device = 1;
  by_device[1].path = "y.sqlite", by_device[1].device = 0;
  RankSet set = assemble_rank_set(by_device);
  EXPECT_EQ(set.ranks[0].path, "y.sqlite");
  EXPECT_NE(set.ranks[0].evidence.find("CUDA device id 0"), std::string::npos);
  std::vector<RankDigest> by_name(2);
  by_name[0].path = "/t/run_rank-12.json", by_name[0].device = 0;
  by_name[1].path = "/t/run_rank-3.json", by_name[1].device = 0;
  set = assemble_rank_set(by_name);
  EXPECT_EQ(set.ranks[0].rank, 3);
  EXPECT_EQ(set.ranks[1].rank, 12);
  EXPECT_EQ(set.ranks[0].evidence, "file name");
  std::vector<RankDigest> by_order(2);
  by_order[0].path = "p.json";
  by_order[1].path = "q.json";
  set = assemble_rank_set(by_order);
  EXPECT_EQ(set.ranks[1].rank, 1);
  EXPECT_NE(set.ranks[1].evidence.find("order given"), std::string::npos);
}

TEST(RankSet, ExpandArguments) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ranks_expand_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"r1.json.gz", "r0.json", "notes.txt"}) std::ofstream(dir / name) << "x";
  auto files = expand_trace_arguments({dir.string()});
  ASSERT_TRUE(files.has_value());
  EXPECT_EQ(files->size(), 2u);
  auto globbed = expand_trace_arguments({(dir / "r*.json*").string(), (dir / "r0.json").string()});
  ASSERT_TRUE(globbed.has_value());
  EXPECT_EQ(globbed->size(), 2u);  // no duplicates
  EXPECT_FALSE(expand_trace_arguments({(dir / "nothing*.json").string()}).has_value());
  EXPECT_FALSE(expand_trace_arguments({(dir / "absent.json").string()}).has_value());
  EXPECT_FALSE(expand_trace_arguments({}).has_value());
  fs::remove_all(dir);
}

TEST(RanksView, TablesAndJsonHoldTheFigures) {
  Plan plan;
  plan.offset = {0, 1'000};
  plan.late = {{2, {1, 25'000}}};
  const RankSet set = build(plan);
  const RanksAnalysis a = analyze_ranks(set);
  const auto tables = ranks_tables(set, a);
  ASSERT_EQ(tables.size(), 10u);
  EXPECT_EQ(tables[0].report, "ranks");
  EXPECT_EQ(tables[2].report, "stragglers");
  ASSERT_EQ(tables[2].rows.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(tables[2].rows[0][0]), 1);
  const std::string json = ranks_json(set, a, TimeUnit::kNs);
  EXPECT_NE(json.find("\"reference_rank\": 0"), std::string::npos) << json.substr(0, 400);
  const std::string text = ranks_text(set, a);
  EXPECT_NE(text.find("rank    1: last in 1 of 6 collectives"), std::string::npos) << text;
}

}  // namespace
}  // namespace kernscope::ranks

// The link table against device names as CUDA reports them (../shared/reference/gpu-and-roofline.md
// table 1a); figures are half the datasheets' bidirectional NVLink totals (H100/H200 900 GB/s, A100
// 600, B200 1800) and PCIe Gen5 x16 = 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s.
TEST(LinkPeaks, MatchedByDeviceNameWords) {
  const auto& rows = kernscope::ranks::builtin_link_peaks();
  auto peak = [&](std::string_view name) {
    auto row = kernscope::ranks::match_link_peak(name, rows);
    return row ? row->bytes_per_s / 1e9 : -1.0;
  };
  EXPECT_DOUBLE_EQ(peak("NVIDIA H200"), 450);
  EXPECT_DOUBLE_EQ(peak("NVIDIA H100 80GB HBM3"), 450);
  EXPECT_DOUBLE_EQ(peak("NVIDIA A100-SXM4-80GB"), 300);
  EXPECT_DOUBLE_EQ(peak("NVIDIA B200"), 900);
  EXPECT_DOUBLE_EQ(peak("NVIDIA H100 PCIe"), 63);
  EXPECT_DOUBLE_EQ(peak("NVIDIA H20"), 450);
  EXPECT_EQ(kernscope::ranks::match_link_peak("NVIDIA H200 NVL", rows)->name, "H200 NVL");  // more words win
  EXPECT_EQ(kernscope::ranks::match_link_peak("NVIDIA GB200", rows)->name, "GB200");        // not B200
  EXPECT_LT(peak("NVIDIA A100-PG509-200"), 0);  // a board name the table does not know
  EXPECT_LT(peak(""), 0);
}

TEST(LinkPeaks, BadTableLinesAreNamed) {
  const std::string header = "name\tmatch\tlink\tper_direction_gbs\tsource\n";
  auto bad = kernscope::ranks::parse_link_peaks(header + "X\tX\tNVLink\tfast\tnone\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("link_peaks.tsv:2"), std::string::npos);
  EXPECT_FALSE(kernscope::ranks::parse_link_peaks("# only a comment\n"));
  auto good = kernscope::ranks::parse_link_peaks("# c\n" + header + "X\tX y\tNVLink\t12.5\tnone\n");
  ASSERT_TRUE(good);
  EXPECT_DOUBLE_EQ(good->at(0).bytes_per_s, 12.5e9);
  EXPECT_EQ(good->at(0).line, 3);
}
