// ChunkPlan: every row in exactly one chunk, chunks contiguous and in order, at most one thread a
// core for balanced plans, and a chunk's exception reaches the caller.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/parallel_chunks.hpp"

namespace kernscope {
namespace {

// Runs `plan` over n rows, counting each row's visits and the threads that ran chunks.
struct Visits {
  std::vector<int> per_row;
  std::set<std::thread::id> threads;
};
Visits visit(const ChunkPlan& plan, std::size_t n) {
  Visits v;
  v.per_row.assign(n, 0);
  std::mutex m;
  plan.run([&](std::size_t chunk, std::size_t begin, std::size_t end) {
    EXPECT_EQ(begin, plan.begin(chunk));
    EXPECT_EQ(end, plan.end(chunk));
    std::lock_guard lock(m);
    v.threads.insert(std::this_thread::get_id());
    for (std::size_t i = begin; i < end; ++i) ++v.per_row[i];
  });
  return v;
}

TEST(ChunkPlan, FixedPlanCoversEveryRowOnce) {
  const ChunkPlan plan(1001, 10, 0, 4);
  EXPECT_EQ(plan.count(), 4u);
  EXPECT_EQ(plan.begin(0), 0u);
  EXPECT_EQ(plan.end(3), 1001u);
  for (std::size_t c = 1; c < plan.count(); ++c) EXPECT_EQ(plan.begin(c), plan.end(c - 1));
  const Visits v = visit(plan, 1001);
  EXPECT_TRUE(std::all_of(v.per_row.begin(), v.per_row.end(), [](int n) { return n == 1; }));
}

TEST(ChunkPlan, BalancedPlanHasSeveralChunksPerCoreAndOneThreadPerCore) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const ChunkPlan plan = ChunkPlan::balanced(100000, 8);
  EXPECT_EQ(plan.count(), cores * 8);  // 100000 rows allow every chunk asked for
  const Visits v = visit(plan, 100000);
  EXPECT_TRUE(std::all_of(v.per_row.begin(), v.per_row.end(), [](int n) { return n == 1; }));
  EXPECT_LE(v.threads.size(), cores);
}

TEST(ChunkPlan, FewRowsMakeOneChunk) {
  const ChunkPlan plan = ChunkPlan::balanced(10, 8);
  EXPECT_EQ(plan.count(), 1u);
  const Visits v = visit(plan, 10);
  EXPECT_EQ(v.threads.size(), 1u);
  EXPECT_TRUE(std::all_of(v.per_row.begin(), v.per_row.end(), [](int n) { return n == 1; }));
}

TEST(ChunkPlan, ChunkExceptionReachesTheCaller) {
  const ChunkPlan plan = ChunkPlan::balanced(1000, 1);
  std::atomic<int> ran{0};
  EXPECT_THROW(plan.run([&](std::size_t chunk, std::size_t, std::size_t) {
    ++ran;
    if (chunk == plan.count() / 2) throw std::runtime_error("chunk failed");
  }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
}

}  // namespace
}  // namespace kernscope
