// ApiLookup's rank index by hand: rows spread over several 64-id words, ids no call has, ids past
// the largest, two processes (no single-process shortcut), and a process whose ids are too sparse
// for the index (the hash map). Every expected row is read off the rows below.
#include <gtest/gtest.h>

#include <random>

#include "analyses/nsys/api_lookup.hpp"
#include "kernscope/string_pool.hpp"

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

// Built over chunks on several threads, the lookup finds what the one-thread build finds: the same
// row for every id, the same joined rows, the same repeats. The table has what makes the build
// order-dependent: ids shared by several rows (backtrace pairs whose outer row comes second, rows
// neither enclosing the other), rows without an id, and three processes in interleaved runs.
TEST(ApiLookup, ChunkedBuildEqualsTheOneThreadBuild) {
  ApiCallColumns a;
  std::mt19937 random(11);
  const std::int64_t pids[] = {kPidA, kPidB, std::int64_t{12} << 24};
  std::uint32_t next_id[3] = {1, 1, 1};
  TimeNs t = 0;
  std::vector<std::pair<std::int64_t, std::uint32_t>> asked;
  for (int run = 0; run < 400; ++run) {
    const int p = static_cast<int>(random() % 3);
    for (int n = 0; n < 500; ++n) {
      t += 10;
      const int kind = static_cast<int>(random() % 20);
      std::uint32_t id = next_id[p];
      next_id[p] += 1 + random() % 3;  // gaps: ids of untraced calls
      if (kind == 0) id = 0;                                             // no id
      if (kind == 1 && id > 40) id -= 1 + random() % 40;                 // an earlier id again, elsewhere in time
      a.start_ns.push_back(t);
      a.end_ns.push_back(t + 5);
      a.global_tid.push_back(pids[p] | 1);
      a.correlation_id.push_back(id);
      a.name.push_back(kNoString);
      asked.push_back({pids[p], id});
      if (kind == 2) {
        // A backtrace pair written inner first: the second row encloses the first.
        a.start_ns.push_back(t - 1);
        a.end_ns.push_back(t + 6);
        a.global_tid.push_back(pids[p] | 1);
        a.correlation_id.push_back(id);
        a.name.push_back(kNoString);
      }
    }
  }
  ASSERT_GT(a.size(), 200'000u);
  const report::ApiLookup one_thread(a, a.size() + 1);
  const report::ApiLookup chunked(a, 1000, 8);  // 8 chunks whatever the machine's cores
  StringPool strings;
  for (const auto& [pid, id] : asked) {
    ASSERT_EQ(one_thread.find(pid, id), chunked.find(pid, id)) << id;
    std::vector<RowIndex> rows_one, rows_chunked;
    one_thread.for_each_row(pid, id, [&](RowIndex r) { rows_one.push_back(r); });
    chunked.for_each_row(pid, id, [&](RowIndex r) { rows_chunked.push_back(r); });
    ASSERT_EQ(rows_one, rows_chunked) << id;
  }
  std::size_t repeats = 0;
  for (RowIndex i = 0; i < a.size(); ++i) {
    ASSERT_EQ(one_thread.is_repeat(i, strings), chunked.is_repeat(i, strings)) << i;
    repeats += one_thread.is_repeat(i, strings);
  }
  EXPECT_GT(repeats, 1000u);  // the pairs were there to be told apart
}

// Which rows repeat another's call, by hand: a backtrace pair (the outer row first, the inner one of
// the same API with a version suffix inside it), a row of another API inside that call (not a
// repeat), and rows without a correlation id (0: joined to nothing) nested the same ways inside the
// process's first id-0 row. A row without an id inside a call of the same name on its thread is a
// repeat too (Kineto writes 0 where the runtime event has no correlation).
TEST(ApiLookup, RepeatsByHandWithAndWithoutIds) {
  StringPool strings;
  const StringId launch = strings.intern("cudaLaunchKernel"), launch_v = strings.intern("cudaLaunchKernel_v7000"),
                 copy = strings.intern("cudaMemcpyAsync");
  ApiCallColumns a;
  auto row = [&](std::uint32_t id, StringId name, TimeNs start, TimeNs end) {
    a.start_ns.push_back(start);
    a.end_ns.push_back(end);
    a.global_tid.push_back(kPidA | 1);
    a.correlation_id.push_back(id);
    a.name.push_back(name);
  };
  row(5, launch, 0, 100);     // 0: a call with id 5
  row(5, launch_v, 10, 20);   // 1: its backtrace twin inside it: a repeat
  row(6, copy, 30, 40);       // 2: another call (its own id)
  row(0, launch, 200, 300);   // 3: the process's first row without an id (the "found" row of id 0)
  row(0, launch_v, 210, 220); // 4: no id, same API inside row 3: a repeat
  row(0, copy, 230, 240);     // 5: no id, another API inside row 3: not a repeat
  row(0, launch, 400, 410);   // 6: no id, outside row 3: not a repeat
  const report::ApiLookup lookup(a);
  const std::vector<bool> expected = {false, true, false, false, true, false, false};
  for (RowIndex i = 0; i < a.size(); ++i) EXPECT_EQ(lookup.is_repeat(i, strings), expected[i]) << "row " << i;
}

}  // namespace
}  // namespace kernscope
