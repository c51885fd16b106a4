// values_at_ranks against a full sort: the values at the asked ranks must be those of the sorted
// array, on every path (small arrays selected in place; large ones by bucket counting; one bucket
// holding most values, which falls back to selecting in place; values across many powers of two;
// signed values with a negative one).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analyses/rank_select.hpp"

namespace kernscope {
namespace {

template <class T>
void expect_ranks_of_sorted(std::vector<T> values, const std::vector<std::size_t>& ranks) {
  std::vector<T> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<T> got = report::values_at_ranks(values, ranks);
  ASSERT_EQ(got.size(), ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(got[i], sorted[ranks[i]]) << "rank " << ranks[i];
}

std::vector<std::size_t> percentile_ranks(std::size_t n) {
  std::vector<std::size_t> ranks;
  for (double q : {50.0, 95.0, 99.0}) {
    const double r = q / 100.0 * static_cast<double>(n - 1);
    ranks.push_back(static_cast<std::size_t>(std::floor(r)));
    ranks.push_back(static_cast<std::size_t>(std::ceil(r)));
  }
  ranks.push_back(0);
  ranks.push_back(n - 1);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

TEST(RankSelect, SmallArraysAreSelectedInPlace) {
  std::vector<std::uint32_t> v = {9, 1, 8, 2, 7, 3, 6, 4, 5};
  expect_ranks_of_sorted(v, {0, 4, 8});
  expect_ranks_of_sorted(std::vector<std::int64_t>{5}, {0});
}

TEST(RankSelect, LargeSpreadValuesByBuckets) {
  std::mt19937_64 random(3);
  std::vector<std::uint32_t> v(300'000);
  // Durations from 1 ns to ~4 s, log-uniform: every power of two gets values.
  for (auto& x : v) x = static_cast<std::uint32_t>(std::exp2(static_cast<double>(random() % 3200) / 100.0));
  expect_ranks_of_sorted(v, percentile_ranks(v.size()));
  std::vector<std::int64_t> w(200'001);
  for (auto& x : w) x = static_cast<std::int64_t>(random() % 5'000'000'000ULL);
  expect_ranks_of_sorted(w, percentile_ranks(w.size()));
}

TEST(RankSelect, OneCrowdedBucketFallsBackToSelectingInPlace) {
  std::mt19937_64 random(5);
  std::vector<std::uint32_t> v(100'000, 2000);  // one value: one bucket holds everything
  for (std::size_t i = 0; i < 500; ++i) v[random() % v.size()] = static_cast<std::uint32_t>(random() % 100'000);
  expect_ranks_of_sorted(v, percentile_ranks(v.size()));
}

TEST(RankSelect, NegativeValuesAreSelectedInPlace) {
  std::mt19937_64 random(7);
  std::vector<std::int64_t> v(50'000);
  for (auto& x : v) x = static_cast<std::int64_t>(random() % 1'000'000);
  v[123] = -40;
  expect_ranks_of_sorted(v, percentile_ranks(v.size()));
}

}  // namespace
}  // namespace kernscope
