// Real multi-rank traces read as ranks (truths from Python's json and sqlite3: tests/fixtures/ranks/README.md),
// and the synthetic 8-rank sets of tests/ranks/make_rank_set.py (truths in the set's truth.json).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "ranks/ranks_set.hpp"
#include "ranks/ranks_skew.hpp"
#include "render/ranks_render.hpp"

namespace kernscope::ranks {
namespace {

const std::filesystem::path kFixtures = KERNSCOPE_FIXTURES_DIR;

TEST(RanksFixtures, KinetoDdpRankWithCollectiveArguments) {
  auto set = read_rank_set({(kFixtures / "ranks/hta__nccl_parser_config__nccl_data.json.xz").string()});
  ASSERT_TRUE(set.has_value()) << set.error().message;
  ASSERT_EQ(set->ranks.size(), 1u);
  const auto& r = set->ranks[0];
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(set->world_size, 2);
  EXPECT_NE(r.evidence.find("distributedInfo"), std::string::npos);
  ASSERT_EQ(r.collectives.items.size(), 21u);
  EXPECT_EQ(r.collectives.with_args, 21);
  int all_reduce = 0, broadcast = 0;
  for (const auto& c : r.collectives.items) {
    all_reduce += c.kind == CollectiveKind::kAllReduce;
    broadcast += c.kind == CollectiveKind::kBroadcast;
    EXPECT_EQ(c.group, "0");
  }
  EXPECT_EQ(all_reduce, 15);
  EXPECT_EQ(broadcast, 6);
  // ProfilerStep#4, #5 and #6 each launch 2 broadcasts and 5 all-reduces (Python's json: every NCCL
  // kernel's launching cudaLaunchKernel, by correlation, lies in one of the three ranges).
  std::map<std::int64_t, int> per_step;
  for (const auto& c : r.collectives.items) ++per_step[c.step];
  EXPECT_EQ(per_step, (std::map<std::int64_t, int>{{4, 7}, {5, 7}, {6, 7}}));
  const Collective* first_ar = nullptr;
  for (const auto& c : r.collectives.items) {
    if (!first_ar && c.kind == CollectiveKind::kAllReduce) first_ar = &c;
  }
  ASSERT_NE(first_ar, nullptr);
  EXPECT_EQ(first_ar->bytes, 2049000 * 4);
  bool missing = false;
  for (const auto& n : set->notes) missing = missing || (n.kind == "missing_ranks" && n.text.find("missing ranks: 1 ") != std::string::npos);
  EXPECT_TRUE(missing);
}

TEST(RanksFixtures, OneNsysExportWithTwoProcesses) {
  auto set = read_rank_set({(kFixtures / "ranks/nsysai_mfu_2gpu_before.sqlite.xz").string()});
  ASSERT_TRUE(set.has_value()) << set.error().message;
  ASSERT_EQ(set->ranks.size(), 2u);
  EXPECT_EQ(set->ranks[0].rank, 0);
  EXPECT_NE(set->ranks[0].evidence.find("process 144 on CUDA device 0"), std::string::npos) << set->ranks[0].evidence;
  EXPECT_NE(set->ranks[1].evidence.find("process 145 on CUDA device 1"), std::string::npos) << set->ranks[1].evidence;
  EXPECT_EQ(set->ranks[0].collectives.items.size(), 33u);
  EXPECT_EQ(set->ranks[1].collectives.items.size(), 33u);
  const auto a = analyze_ranks(*set);
  std::cout << ranks_text(*set, a);
  EXPECT_EQ(a.collectives.size(), 33u);
  EXPECT_TRUE(a.incomplete.empty());
  EXPECT_TRUE(a.offsets[1].shared_clock);
  EXPECT_DOUBLE_EQ(a.offsets[1].offset_ns, 0.0);
  EXPECT_DOUBLE_EQ(a.offsets[1].end_difference_ns, -22214.0);
  EXPECT_DOUBLE_EQ(a.offsets[1].spread_ns, 3272.0);
  EXPECT_EQ(a.collectives[0].kind, CollectiveKind::kSendRecv);
}

TEST(RanksFixtures, RanksOfDifferentRunsAreSaidToBeMixed) {
  // trace_diff's control is rank 3 of 8, its test rank 1 of 2 (their distributedInfo).
  auto set = read_rank_set({(kFixtures / "kineto/trace_diff__control__control.json.xz").string(),
                            (kFixtures / "kineto/trace_diff__test__test.json.xz").string()});
  ASSERT_TRUE(set.has_value()) << set.error().message;
  std::string notes;
  for (const auto& n : set->notes) notes += n.kind + ": " + n.text + "\n";
  EXPECT_NE(notes.find("world_sizes_differ: mixed runs: the traces declare different world sizes (2, 8)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("missing_ranks: missing ranks: 0, 2, 4, 5, 6, 7"), std::string::npos) << notes;
}

}  // namespace
}  // namespace kernscope::ranks
