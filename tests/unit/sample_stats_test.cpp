#include <gtest/gtest.h>

#include <cmath>

#include "analyses/sample_stats.hpp"

namespace kernscope {
namespace {

TEST(SampleStats, EvenCountMedianAndSampleStdev) {
  std::vector<std::int64_t> v{4, 1, 3, 2};
  auto s = compute_stats(v).value();
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.sum, 10);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(5.0 / 3.0));  // sum of squared deviations 5, n - 1 = 3
}

TEST(SampleStats, OddCountAndSingleSample) {
  std::vector<std::int64_t> v{30, 10, 20};
  EXPECT_DOUBLE_EQ(compute_stats(v)->median, 20.0);
  std::vector<std::int64_t> one{7};
  auto s = compute_stats(one).value();
  EXPECT_DOUBLE_EQ(s.stdev, 0.0);
  EXPECT_DOUBLE_EQ(s.median, 7.0);
  std::vector<std::int64_t> none;
  EXPECT_FALSE(compute_stats(none));
}

TEST(SampleStats, LargeValuesStayExact) {
  std::vector<std::int64_t> v{4'000'000'000'001, 4'000'000'000'003};
  auto s = compute_stats(v).value();
  EXPECT_EQ(s.sum, 8'000'000'000'004);
  EXPECT_DOUBLE_EQ(s.median, 4'000'000'000'002.0);
  EXPECT_NEAR(s.stdev, std::sqrt(2.0), 1e-9);
}

}  // namespace
}  // namespace kernscope
