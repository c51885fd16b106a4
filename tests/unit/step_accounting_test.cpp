// Where each step's time goes, on steps built by hand: every stretch of the timeline below is
// worked out in the comments, so each category's total is known before kernscope runs.
#include <gtest/gtest.h>

#include "analyses/steps/step_accounting.hpp"
#include "kernscope/steps.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

std::int64_t part(const TimeAccount& a, const std::string& name) {
  auto it = a.parts.find(name);
  return it == a.parts.end() ? 0 : it->second;
}

// One synchronous step [0, 1000) on thread 1 with every category in it:
//   [0,10) idle   [10,20) launch   [20,30) a gap between two launches of the thread (launch)
//   [30,40) launch   [40,41) a gap (launch)   [41,45) launch (cudaMemcpyAsync)   [45,49) launch (the all-reduce)   [49,50) idle
//   [50,100) blocked in cudaStreamSynchronize (nothing runs yet)
//   [100,250) gemv   [250,300) gemv + gemm (25 each)   [300,400) gemm   (all gpu)
//   [400,450) a pageable H2D copy only (copy)   [450,500) an NCCL kernel only (communication)
//   [500,900) blocked   [900,910) idle   [910,920) cudaMalloc (host.runtime)
//   [920,970) the "data" range (framework), holding aten::to [940,950) (a Kineto cpu_op)
//   [970,1000) idle
TEST(StepAccounting, EveryCategoryByHand) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000);
  s.nvtx(kNvtxPushPopRange, "measure", -50, 2000);  // around the step: says nothing about an instant
  s.api("cudaLaunchKernel_v7000", 10, 20, 1);
  s.api("cudaLaunchKernel_v7000", 30, 40, 2);
  s.api("cudaMemcpyAsync_v3020", 41, 45, 3);
  s.api("cudaLaunchKernel_v7000", 45, 49, 4);
  s.api("cudaStreamSynchronize_v3020", 50, 900, 0);
  s.api("cudaMalloc_v3020", 910, 920, 0);
  s.nvtx(kNvtxPushPopRange, "data", 920, 970);
  s.nvtx(kNvtxPushPopRange, "aten::to", 940, 950, testing::global_tid(1), kKinetoCpuOpDomain);
  s.kernel("gemv2T_kernel_val", 100, 300, 1);
  s.kernel("ampere_sgemm_128x64_nn", 250, 400, 2);
  s.memcpy(400, 450, 1, 3, /*src pageable*/ 0, 2);
  s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 450, 500, 4);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.steps.size(), 1u);
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  ASSERT_EQ(accounting.steps.size(), 1u);
  const TimeAccount& a = accounting.steps[0];
  EXPECT_EQ(a.window_ns, 1000);
  EXPECT_EQ(a.at(TimeCategory::kGpu), 300);
  EXPECT_EQ(part(a, "gpu.gemv"), 175);
  EXPECT_EQ(part(a, "gpu.gemm"), 125);
  EXPECT_EQ(a.at(TimeCategory::kCommunication), 50);
  EXPECT_EQ(a.at(TimeCategory::kCopy), 50);
  EXPECT_EQ(part(a, "copy.h2d"), 50);
  EXPECT_EQ(a.pageable_copy_ns, 50);
  EXPECT_EQ(a.at(TimeCategory::kHost), 99);
  EXPECT_EQ(part(a, "host.launch"), 39);
  EXPECT_EQ(part(a, "host.runtime"), 10);
  EXPECT_EQ(part(a, "host.framework"), 50);
  EXPECT_EQ(a.framework.at("data"), 50);  // named by the outermost range: aten::to is inside it
  EXPECT_EQ(a.framework.count("aten::to"), 0u);
  EXPECT_EQ(a.at(TimeCategory::kBlocked), 450);
  EXPECT_EQ(part(a, "blocked.cudaStreamSynchronize"), 450);
  EXPECT_EQ(a.at(TimeCategory::kIdle), 51);
  EXPECT_EQ(a.sum(), a.window_ns);
  EXPECT_EQ(a.bottleneck(), TimeCategory::kBlocked);
  ASSERT_EQ(accounting.phases.size(), 1u);
  EXPECT_EQ(accounting.loop.window_ns, 1000);
}

// Host work nothing records, known from the tracer's thread CPU clocks, and launched work waiting
// for the GPU, by hand (in microseconds: gaps between calls over 100 us end a launch run). One
// step [0,1000) us:
//   [0,10) cudaLaunchKernel (host.launch)   [10,20) its kernel not started yet (idle.queued)
//   [20,100) the kernel (gpu)   [100,600) the launching thread busy on a CPU, nothing recorded
//   (host.unrecorded)   [600,900) the thread not busy (idle.unexplained)   [900,910) a launch
//   [910,920) queued   [920,1000) its kernel
TEST(StepAccounting, UnrecordedHostWorkAndQueuedWorkByHand) {
  constexpr TimeNs us = 1000;
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000 * us);
  s.api("cudaLaunchKernel_v7000", 0, 10 * us, 1);
  s.kernel("ampere_sgemm_128x64_nn", 20 * us, 100 * us, 1);
  s.api("cudaLaunchKernel_v7000", 900 * us, 910 * us, 2);
  s.kernel("ampere_sgemm_128x64_nn", 920 * us, 1000 * us, 2);
  s.thread_cpu(0, 100 * us, false);
  s.thread_cpu(100 * us, 600 * us, true);
  s.thread_cpu(600 * us, 900 * us, false);
  s.thread_cpu(600 * us, 700 * us, true, testing::global_tid(9, 555));  // another process's thread: not this step's
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.steps.size(), 1u);
  const TimeAccount a = account_steps(s.trace, OpRuleSet::builtin(), steps).steps[0];
  EXPECT_EQ(a.window_ns, 1000 * us);
  EXPECT_EQ(a.at(TimeCategory::kGpu), 160 * us);
  EXPECT_EQ(part(a, "host.launch"), 20 * us);
  EXPECT_EQ(part(a, "host.unrecorded"), 500 * us);
  EXPECT_EQ(a.at(TimeCategory::kHost), 520 * us);
  EXPECT_EQ(part(a, "idle.queued"), 20 * us);
  EXPECT_EQ(part(a, "idle.unexplained"), 300 * us);
  EXPECT_EQ(a.at(TimeCategory::kIdle), 320 * us);
  EXPECT_EQ(a.sum(), a.window_ns);
}

// A step the GPU and the host both leave mostly idle has idle for its bottleneck (Hugging Face
// generate() traced without the thread CPU clocks is 84 % idle): one step [0,1000) us with a launch
// [0,10) and its kernel [10,110): gpu 100, host.launch 10, idle 890.
TEST(StepAccounting, AMostlyIdleStepHasIdleForItsBottleneck) {
  constexpr TimeNs us = 1000;
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000 * us);
  s.api("cudaLaunchKernel_v7000", 0, 10 * us, 1);
  s.kernel("ampere_sgemm_128x64_nn", 10 * us, 110 * us, 1);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  ASSERT_EQ(accounting.steps.size(), 1u);
  EXPECT_EQ(accounting.steps[0].at(TimeCategory::kIdle), 890 * us);
  EXPECT_EQ(accounting.steps[0].bottleneck(), TimeCategory::kIdle);
  EXPECT_EQ(accounting.loop.bottleneck(), TimeCategory::kIdle);
}

// Compute beside a collective: the instant is the compute's (communication is only what runs with
// no compute beside it, the exposed part). One step [0,200): a GEMM [0,100), an all-reduce [50,150)
// on another stream: gpu 100 (of which 50 overlapped the collective), communication 50, idle 50.
TEST(StepAccounting, ComputeBesideACollectiveIsGpuTimeOnlyTheRestIsCommunication) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "train_step", 0, 200);
  s.kernel("ampere_sgemm_128x64_nn", 0, 100, 0, testing::global_pid(), 7);
  s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 150, 0, testing::global_pid(), 9);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.steps.size(), 1u);
  const TimeAccount a = account_steps(s.trace, OpRuleSet::builtin(), steps).steps[0];
  EXPECT_EQ(a.at(TimeCategory::kGpu), 100);
  EXPECT_EQ(part(a, "gpu.gemm"), 100);
  EXPECT_EQ(a.at(TimeCategory::kCommunication), 50);
  EXPECT_EQ(part(a, "communication.collectives"), 50);
  EXPECT_EQ(a.sum(), a.window_ns);
}

// An asynchronous step: its range [0,100) ends long before its kernel [50,500). The window runs
// to the GPU's end: [0,10) idle, [10,20) launch, [20,50) idle, [50,500) gpu.
TEST(StepAccounting, AsynchronousStepCountsUntilItsGpuWorkEnds) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 100);
  s.api("cudaGraphLaunch_v10000", 10, 20, 1);
  s.kernel("gemv2T_kernel_val", 50, 500, 1);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  ASSERT_EQ(accounting.steps.size(), 1u);
  const TimeAccount& a = accounting.steps[0];
  EXPECT_EQ(a.window_ns, 500);
  EXPECT_EQ(a.at(TimeCategory::kGpu), 450);
  EXPECT_EQ(a.at(TimeCategory::kHost), 10);
  EXPECT_EQ(a.at(TimeCategory::kIdle), 40);
  EXPECT_EQ(a.bottleneck(), TimeCategory::kGpu);
}

// Blocking copies are waits in every spelling (hipMemcpyWithStream, cuMemcpyDtoH, cudaMemcpy);
// a blocked thread outranks another thread's framework range; an asynchronous copy call is a
// launch. Step [0,400) on thread 1; thread 2 holds a range [1,400) (a range around the whole
// step would say nothing about an instant).
//   [0,100) hipMemcpyWithStream   [100,200) cuMemcpyDtoH_v2   [200,300) cudaMemcpyAsync (launch)
//   [300,400) only thread 2's range (framework)
TEST(StepAccounting, BlockingCopiesInEverySpellingAreWaits) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 400);
  s.nvtx(kNvtxPushPopRange, "loader", 1, 400, testing::global_tid(2));
  s.api("hipMemcpyWithStream", 0, 100, 1);
  s.api("cuMemcpyDtoH_v2", 100, 200, 2);
  s.api("cudaMemcpyAsync", 200, 300, 3);
  s.kernel("gemv2T_kernel_val", 500, 600, 9);  // a kernel elsewhere, so the trace has GPU work
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  ASSERT_EQ(accounting.steps.size(), 1u);
  const TimeAccount& a = accounting.steps[0];
  EXPECT_EQ(a.window_ns, 400);
  EXPECT_EQ(part(a, "blocked.hipMemcpyWithStream"), 100);
  EXPECT_EQ(part(a, "blocked.cuMemcpyDtoH"), 100);
  EXPECT_EQ(part(a, "host.launch"), 100);
  EXPECT_EQ(part(a, "host.framework"), 100);
  EXPECT_EQ(a.framework.at("loader"), 100);
  EXPECT_EQ(a.sum(), 400);
}

// A wait by behaviour, whatever the call's name (in microseconds). One step [0,400):
//   [0,10) cudaLaunchKernel (host.launch), its kernel [20,200)
//   [10,260) cudaMemcpyAsync of 704 bytes device-to-host into pageable memory: its copy runs
//   [200,250) behind the kernel and the call returns at 260, after it: a wait. GPU idle inside it:
//   [10,20) and [250,260) (blocked.cudaMemcpyAsync, 20); the copy alone [200,250) (copy.d2h)
//   [300,310) cudaMemcpyAsync to pinned memory, its copy [302,305) done before it returns: the
//   same name, but not pageable, so a launch like any (host.launch) - no wait by behaviour.
TEST(StepAccounting, AnAsyncCopyToPageableMemoryThatReturnedAfterItsCopyIsAWait) {
  constexpr TimeNs us = 1000;
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 400 * us);
  s.api("cudaLaunchKernel_v7000", 0, 10 * us, 1);
  s.kernel("gemv2T_kernel_val", 20 * us, 200 * us, 1);
  s.api("cudaMemcpyAsync_v3020", 10 * us, 260 * us, 2);
  s.memcpy(200 * us, 250 * us, 2, 2, /*src device*/ 2, /*dst pageable*/ 0);
  s.api("cudaMemcpyAsync_v3020", 300 * us, 310 * us, 3);
  s.memcpy(302 * us, 305 * us, 2, 3, /*src device*/ 2, /*dst pinned*/ 1);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.steps.size(), 1u);
  const TimeAccount a = account_steps(s.trace, OpRuleSet::builtin(), steps).steps[0];
  EXPECT_EQ(part(a, "blocked.cudaMemcpyAsync"), 20 * us);
  EXPECT_EQ(part(a, "copy.d2h"), 50 * us + 3 * us);
  EXPECT_EQ(part(a, "host.launch"), 10 * us + 7 * us);  // [0,10) and [300,302) + [305,310)
  EXPECT_EQ(a.at(TimeCategory::kGpu), 180 * us);
  EXPECT_EQ(a.sum(), a.window_ns);
}

// Steps of two processes: each is accounted with its own process's work only, and the process
// with the most GPU time leads the phases and the loop.
TEST(StepAccounting, ProcessesAreAccountedApartAndTheBusiestLeads) {
  testing::SyntheticTrace s;
  const std::int64_t a_pid = 100, b_pid = 200;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000, testing::global_tid(1, a_pid));
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000, testing::global_tid(1, b_pid));
  s.api("cudaLaunchKernel", 0, 10, 1, testing::global_tid(1, a_pid));
  s.api("cudaLaunchKernel", 0, 10, 2, testing::global_tid(1, b_pid));
  s.kernel("gemv2T_kernel_val", 100, 200, 1, testing::global_pid(a_pid));  // A: 100 ns of GPU
  s.kernel("gemv2T_kernel_val", 100, 900, 2, testing::global_pid(b_pid));  // B: 800 ns of GPU
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.steps.size(), 2u);
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  for (std::size_t i = 0; i < 2; ++i) {
    const bool is_a = steps.steps[i].global_pid == testing::global_pid(a_pid);
    EXPECT_EQ(accounting.steps[i].at(TimeCategory::kGpu), is_a ? 100 : 800);
    EXPECT_EQ(accounting.steps[i].sum(), 1000);
  }
  EXPECT_EQ(accounting.processes, 2u);
  EXPECT_EQ(accounting.process, testing::global_pid(b_pid));
  EXPECT_EQ(accounting.loop.at(TimeCategory::kGpu), 800);
}

// GPU work that runs on into the next step counts there: step 1's range [0,100) launches a kernel
// [50,300), step 2 [200,400) one [300,350). Step 1's window ends where step 2 starts (200): [0,10)
// idle, [10,20) launch, [20,50) the gap to the thread's next call (210, under 100 us: launch),
// [50,200) gpu. Step 2 [200,400): [200,350) gpu (step 1's kernel,
// then its own), [350,400) idle (its launch [210,220) falls while the GPU runs). The loop is 400 ns
// of wall clock, each instant once.
TEST(StepAccounting, WorkRunningIntoTheNextStepCountsThere) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 100);
  s.api("cudaLaunchKernel", 10, 20, 1);
  s.kernel("gemv2T_kernel_val", 50, 300, 1);
  s.nvtx(kNvtxPushPopRange, "decode_step", 200, 400);
  s.api("cudaLaunchKernel", 210, 220, 2);
  s.kernel("gemv2T_kernel_val", 300, 350, 2);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.steps.size(), 2u);
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  const TimeAccount& first = accounting.steps[0];
  const TimeAccount& second = accounting.steps[1];
  EXPECT_EQ(first.window_ns, 200);
  EXPECT_EQ(first.at(TimeCategory::kGpu), 150);
  EXPECT_EQ(first.at(TimeCategory::kHost), 40);
  EXPECT_EQ(first.at(TimeCategory::kIdle), 10);
  EXPECT_EQ(second.window_ns, 200);
  EXPECT_EQ(second.at(TimeCategory::kGpu), 150);
  EXPECT_EQ(second.at(TimeCategory::kIdle), 50);
  EXPECT_EQ(accounting.loop.window_ns, 400);
}

}  // namespace
}  // namespace kernscope
