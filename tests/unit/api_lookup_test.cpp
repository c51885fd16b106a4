// ApiLookup's rank index by hand: rows spread over several 64-id words, ids no call has, ids past
// the largest, two processes (no single-process shortcut), and a process whose ids are too sparse
// for the index (the hash map). Every expected row is read off the rows below.
#include <gtest/gtest.h>

#include "analyses/api_lookup.hpp"

namespace kernscope {
namespace {

constexpr std::int64_t kPidA = std::int64_t{7} << 24, kPidB = std::int64_t{9} << 24;

void add(ApiCallColumns& a, std::int64_t pid, std::uint32_t id, TimeNs start) {
  a.start_ns.push_back(start);
  a.end_ns.push_back(start + 5);
  a.global_tid.push_back(pid | 1);
  a.correlation_id.push_back(id);
  a.name.push_back(kNoString);
}

TEST(ApiLookup, RankIndexFindsEveryIdAcrossWordsAndProcesses) {
  ApiCallColumns a;
  add(a, kPidA, 1, 0);      // row 0
  add(a, kPidA, 63, 10);    // row 1: last id of the first word
  add(a, kPidB, 63, 20);    // row 2: the same id in the other process
  add(a, kPidA, 64, 30);    // row 3: first id of the second word
  add(a, kPidA, 200, 40);   // row 4: fourth word
  add(a, kPidB, 5, 50);     // row 5
  const report::ApiLookup lookup(a);
  EXPECT_EQ(lookup.find(kPidA, 1), 0u);
  EXPECT_EQ(lookup.find(kPidA, 63), 1u);
  EXPECT_EQ(lookup.find(kPidB, 63), 2u);
  EXPECT_EQ(lookup.find(kPidA, 64), 3u);
  EXPECT_EQ(lookup.find(kPidA, 200), 4u);
  EXPECT_EQ(lookup.find(kPidB, 5), 5u);
  for (std::uint32_t missing : {0u, 2u, 62u, 65u, 199u, 201u, 5000u}) EXPECT_FALSE(lookup.find(kPidA, missing)) << missing;
  EXPECT_FALSE(lookup.find(kPidB, 1));
  EXPECT_FALSE(lookup.find(std::int64_t{3} << 24, 1));  // a process without calls
}

TEST(ApiLookup, SparseIdsFallBackToTheHashMap) {
  ApiCallColumns a;
  // Two calls whose ids are 4 billion apart: 256 ids per call plus 4 M would be exceeded.
  add(a, kPidA, 17, 0);
  add(a, kPidA, 4'000'000'000u, 10);
  add(a, kPidA, 17, 2);  // the same id again (2..7), neither enclosing 0..5 nor inside it: joined after it
  const report::ApiLookup lookup(a);
  EXPECT_EQ(lookup.find(kPidA, 17), 0u);
  EXPECT_EQ(lookup.find(kPidA, 4'000'000'000u), 1u);
  EXPECT_FALSE(lookup.find(kPidA, 18));
  std::vector<RowIndex> rows;
  lookup.for_each_row(kPidA, 17, [&](RowIndex r) { rows.push_back(r); });
  EXPECT_EQ(rows, (std::vector<RowIndex>{0, 2}));
}

}  // namespace
}  // namespace kernscope
