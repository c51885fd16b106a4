// kernscope/annotate.h: the step profiler starts and stops around the chosen iterations, and the
// NVTX range compiles in C++ (its calls go nowhere without an injected tool).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernscope/annotate.h"

namespace {

std::string calls;
struct FakeProfiler {
  static void start() { calls += "S"; }
  static void stop() { calls += "E"; }
};

TEST(Annotate, StepProfilerWrapsTheChosenIterations) {
  unsetenv("KERNSCOPE_PROFILE_START_STOP");
  calls.clear();
  {
    kernscope::BasicStepProfiler<FakeProfiler> steps(2, 3);
    std::string trace;
    for (int i = 0; i < 6; ++i) {
      steps.step();
      trace += steps.active() ? '1' : '0';
    }
    EXPECT_EQ(trace, "001100");
  }
  EXPECT_EQ(calls, "SE");
  setenv("KERNSCOPE_PROFILE_START_STOP", "0-0,4-9", 1);
  calls.clear();
  {
    kernscope::BasicStepProfiler<FakeProfiler> steps(2, 3);
    for (int i = 0; i < 6; ++i) steps.step();
  }  // the loop ended inside 4-9: the destructor stops
  EXPECT_EQ(calls, "SESE");
  unsetenv("KERNSCOPE_PROFILE_START_STOP");
}

TEST(Annotate, ParsesIterationSpans) {
  std::vector<std::pair<long, long>> spans;
  EXPECT_TRUE(kernscope::parse_iterations("3-5,7", spans));
  EXPECT_EQ(spans, (std::vector<std::pair<long, long>>{{3, 5}, {7, 7}}));
  for (const char* bad : {"", "x", "5-2", "-1", "3-", "1-2x"}) EXPECT_FALSE(kernscope::parse_iterations(bad, spans)) << bad;
  { KERNSCOPE_RANGE("compiles"); }
  { kernscope::ScopedRange r("with-domain", "kernscope-test"); }
}

}  // namespace
