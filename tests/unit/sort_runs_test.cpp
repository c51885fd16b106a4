// sort_by_runs: the order std::sort gives under a total order, std::stable_sort's under ties,
// whether the list is a few ascending runs (the case it is for), one run, empty, or shuffled.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "base/sort_runs.hpp"

namespace kernscope {
namespace {

// `runs` ascending runs of random lengths and values, one after the other.
std::vector<std::pair<int, int>> runs_of(std::mt19937& rng, int runs, int max_length) {
  std::vector<std::pair<int, int>> v;
  std::uniform_int_distribution<int> length(0, max_length), step(0, 3), value(0, 1000);
  for (int r = 0; r < runs; ++r) {
    int x = value(rng);
    for (int i = length(rng); i > 0; --i) {
      x += step(rng);  // steps of 0 make ties
      v.emplace_back(x, static_cast<int>(v.size()));
    }
  }
  return v;
}

TEST(SortByRuns, MatchesStdSortUnderATotalOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    auto v = runs_of(rng, 1 + trial % 9, 300);
    auto expected = v;
    std::sort(expected.begin(), expected.end());
    sort_by_runs(v, std::less<>());
    ASSERT_EQ(v, expected) << "trial " << trial;
  }
}

TEST(SortByRuns, KeepsTiesInTheirOrderLikeStableSort) {
  std::mt19937 rng(11);
  auto by_first = [](const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; };
  for (int trial = 0; trial < 200; ++trial) {
    auto v = runs_of(rng, 1 + trial % 7, 200);
    auto expected = v;
    std::stable_sort(expected.begin(), expected.end(), by_first);
    sort_by_runs(v, by_first);
    ASSERT_EQ(v, expected) << "trial " << trial;
  }
}

TEST(SortByRuns, ShuffledSortedEmptyAndSingle) {
  std::mt19937 rng(3);
  std::vector<int> shuffled(5000);
  for (int i = 0; i < 5000; ++i) shuffled[static_cast<std::size_t>(i)] = i % 977;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);  // many short runs: the fallback
  auto expected = shuffled;
  std::sort(expected.begin(), expected.end());
  sort_by_runs(shuffled, std::less<>());
  EXPECT_EQ(shuffled, expected);
  std::vector<int> sorted = expected;
  sort_by_runs(sorted, std::less<>());
  EXPECT_EQ(sorted, expected);
  std::vector<int> empty, one{4};
  sort_by_runs(empty, std::less<>());
  sort_by_runs(one, std::less<>());
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(one, std::vector<int>{4});
  std::vector<int> descending{5, 4, 3, 2, 1};  // five runs of one
  sort_by_runs(descending, std::less<>());
  EXPECT_EQ(descending, (std::vector<int>{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace kernscope
