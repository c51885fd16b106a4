// The regression gate: its grammar, and its verdicts on samples whose answer follows by hand.
// NoiseOnlyChangePasses asserts the condition holds there and the gate still passes, so a gate
// that ignored the noise (failed = holds) fails it.
#include <gtest/gtest.h>

#include "analyses/diff/gate.hpp"

namespace {

using namespace kernscope;

SideFigures side_with_tpot(const std::vector<std::vector<std::int64_t>>& runs) {
  SideFigures side{"side", {}};
  for (const auto& tpot : runs) {
    RunFigures r;
    r.tpot = tpot;
    side.runs.push_back(r);
  }
  return side;
}

std::vector<std::int64_t> repeat(std::int64_t value, int n) { return std::vector<std::int64_t>(static_cast<std::size_t>(n), value); }

TEST(Gate, Grammar) {
  auto c = parse_gate("tpot_p50 > +5%");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->metric, "tpot_p50");
  EXPECT_EQ(c->op, '>');
  EXPECT_DOUBLE_EQ(c->threshold, 5);
  EXPECT_TRUE(c->relative);
  c = parse_gate("class:gemv>10%");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->metric, "class");
  EXPECT_EQ(c->subject, "gemv");
  // Template brackets in a kernel name are not the operator.
  c = parse_gate("kernel:void f<int, (int)2>(float *) > +2ms");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->subject, "void f<int, (int)2>(float *)");
  EXPECT_DOUBLE_EQ(c->threshold, 2e6);
  EXPECT_FALSE(c->relative);
  c = parse_gate("ttft < -10%");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, '<');
  EXPECT_DOUBLE_EQ(c->threshold, -10);
  c = parse_gate("total_kernel_time > 1.5us");
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->threshold, 1500);
  for (const char* bad : {"", "tpot_p50", "tpot_p50 > 5", "tpot_p50 >> 5%", "tpot_p50 > +5 %%", "speed > 5%",
                          "class:nonsense > 1%", "kernel: > 1%", "tpot_p50 > 5 parsecs"}) {
    auto r = parse_gate(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("METRIC OP CHANGE"), std::string::npos) << "the grammar is printed: " << bad;
  }
}

TEST(Gate, ClearRegressionFails) {
  // 100 steps of 10 ms +-0.1 ms against 11 ms +-0.1 ms: +10 %, every resample far beyond +5 %.
  std::vector<std::int64_t> a, b;
  for (int i = 0; i < 100; ++i) {
    a.push_back(10'000'000 + (i % 2 ? 100'000 : -100'000));
    b.push_back(11'000'000 + (i % 2 ? 100'000 : -100'000));
  }
  auto v = evaluate_gate(*parse_gate("tpot_p50 > +5%"), side_with_tpot({a}), side_with_tpot({b}), {});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_NEAR(v->change, 10.0, 0.01);
  EXPECT_TRUE(v->holds);
  EXPECT_TRUE(v->beyond_noise);
  EXPECT_TRUE(v->failed);
  EXPECT_EQ(v->noise_from, "100 and 100 decode steps");
  // The same in absolute terms: +1 ms.
  v = evaluate_gate(*parse_gate("tpot_mean > +0.5ms"), side_with_tpot({a}), side_with_tpot({b}), {});
  ASSERT_TRUE(v);
  EXPECT_NEAR(v->change, 1e6, 1);
  EXPECT_TRUE(v->failed);
}

TEST(Gate, NoiseOnlyChangePasses) {
  // A: ten steps of 10 ms. B: nine of 10 ms and one of 16 ms: the mean is +6 % (> +5 %), but a
  // resample leaves the slow step out with probability 0.9^10 = 35 %, so the 95 % interval starts
  // at 0: within the noise.
  const auto a = repeat(10'000'000, 10);
  auto b = repeat(10'000'000, 9);
  b.push_back(16'000'000);
  auto v = evaluate_gate(*parse_gate("tpot_mean > +5%"), side_with_tpot({a}), side_with_tpot({b}), {});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_NEAR(v->change, 6.0, 1e-9);
  EXPECT_TRUE(v->holds);
  EXPECT_DOUBLE_EQ(v->low, 0);
  EXPECT_FALSE(v->beyond_noise);
  EXPECT_FALSE(v->failed);
}

TEST(Gate, RepeatedRunsAreTheUnit) {
  // Three runs a side: run means 10, 10.2, 9.8 ms against 12, 12.2, 11.8 ms: +20 % whatever runs
  // are drawn (the extremes: 10.2 vs 11.8 is +15.7 %).
  auto v = evaluate_gate(*parse_gate("tpot_mean > +10%"),
                         side_with_tpot({repeat(10'000'000, 5), repeat(10'200'000, 5), repeat(9'800'000, 5)}),
                         side_with_tpot({repeat(12'000'000, 5), repeat(12'200'000, 5), repeat(11'800'000, 5)}), {});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->noise_from, "3 and 3 runs");
  EXPECT_NEAR(v->change, 20.0, 1e-9);
  EXPECT_GT(v->low, 15.0);
  EXPECT_TRUE(v->failed);
}

TEST(Gate, SameSeedSameVerdictAndMissingStepsAreAnError) {
  std::vector<std::int64_t> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(10'000'000 + (i * 7919 % 1000) * 1000);
    b.push_back(10'300'000 + (i * 104729 % 1000) * 1000);
  }
  const auto x = evaluate_gate(*parse_gate("tpot_p95 > +1%"), side_with_tpot({a}), side_with_tpot({b}), {});
  const auto y = evaluate_gate(*parse_gate("tpot_p95 > +1%"), side_with_tpot({a}), side_with_tpot({b}), {});
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->low, y->low);
  EXPECT_EQ(x->high, y->high);
  auto none = evaluate_gate(*parse_gate("ttft > +1%"), side_with_tpot({a}), side_with_tpot({b}), {});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no prefill steps"), std::string::npos) << none.error().message;
}

}  // namespace
