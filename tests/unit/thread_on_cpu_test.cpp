// When a thread was on a CPU (analyses/steps/thread_on_cpu.hpp), from stretches built here by hand.
#include <gtest/gtest.h>

#include "analyses/steps/thread_on_cpu.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope::report {
namespace {

using testing::SyntheticTrace;

TEST(ThreadOnCpu, MostlyBusyCountsCpuTimeProRataAndNothingOutsideTheStretches) {
  SyntheticTrace t;
  t.thread_cpu(0, 1'000, true);
  t.thread_cpu(1'000, 3'000, false);
  t.thread_cpu(3'000, 4'000, true);
  t.thread_cpu(5'000, 6'000, true);  // after a hole [4000, 5000)
  const ThreadOnCpu cpu(t.trace, testing::global_tid(1));
  ASSERT_TRUE(cpu.known());
  EXPECT_TRUE(cpu.mostly_busy(0, 1'000));
  EXPECT_TRUE(cpu.mostly_busy(500, 1'500));    // 500 of 1000 busy: half
  EXPECT_FALSE(cpu.mostly_busy(500, 1'600));   // 500 of 1100
  EXPECT_FALSE(cpu.mostly_busy(1'000, 3'000));
  EXPECT_TRUE(cpu.mostly_busy(2'000, 4'000));  // 1000 of 2000
  EXPECT_FALSE(cpu.mostly_busy(3'000, 5'500));  // runs into the hole: not known
  EXPECT_FALSE(cpu.mostly_busy(5'500, 7'000));  // past the last stretch
  EXPECT_FALSE(ThreadOnCpu(t.trace, testing::global_tid(2)).mostly_busy(0, 1'000));  // another thread: nothing known
}

TEST(ThreadOnCpu, WokeBeforeSkipsShortWaitsAndStopsAtALongOne) {
  SyntheticTrace t;
  t.thread_cpu(0, 10'000, false);        // asleep 10 us
  t.thread_cpu(10'000, 20'000, true);
  t.thread_cpu(20'000, 21'000, false);   // preempted 1 us
  t.thread_cpu(21'000, 30'000, true);
  const ThreadOnCpu cpu(t.trace, testing::global_tid(1));
  EXPECT_EQ(cpu.woke_before(25'000, 5'000, 0), 10'000);
  EXPECT_EQ(cpu.woke_before(25'000, 500, 0), 21'000);             // a 1 us wait is a gap at 0.5 us
  EXPECT_EQ(cpu.woke_before(25'000, 5'000, 15'000), std::nullopt);  // woke before not_before
  EXPECT_EQ(cpu.woke_before(10'000, 5'000, 0), 10'000);           // at the wake itself
  EXPECT_EQ(cpu.woke_before(40'000, 5'000, 0), std::nullopt);     // past the stretches
  SyntheticTrace busy;
  busy.thread_cpu(0, 10'000, true);
  EXPECT_EQ(ThreadOnCpu(busy.trace, testing::global_tid(1)).woke_before(5'000, 1'000, 0), std::nullopt);  // busy since the start
}

}  // namespace
}  // namespace kernscope::report
