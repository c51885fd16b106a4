// kernscope info's span: recorded events only. Expected values are sqlite3's on the export
// (tests/fixtures/nsys/llama_decode_pysample_h200, made with an NVTX capture range): NVTX ranges
// and marks, runtime calls, kernels and memsets start at -260,445,162 ns at the earliest (a "GIL
// Trace:Holding GIL" range open when profiling began; DIAGNOSTIC_EVENT dates "Profiling has
// started" at 0) and end at 2,792,103,049 ns (a runtime call); the three NVTX_EVENTS rows of
// eventType 75 (NvtxDomainCreate) are dated -28,079,209,200 .. -28,073,017,568 ns, when the
// program created its domains, 28 s before the capture. Before the fix the span began there
// (-28079209200 ns, "30.871 s").
#include <gtest/gtest.h>

#include "analyses/steps/host_profile.hpp"
#include "kernscope/open.hpp"
#include "analyses/overview.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

TEST(Overview, SpanLeavesOutNvtxDeclarationsAndSaysSo) {
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_pysample_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  const TraceOverview o = describe(*trace);
  EXPECT_EQ(o.first_ns, -260'445'162);
  EXPECT_EQ(o.last_ns, 2'792'103'049);
  EXPECT_EQ(o.declarations_outside, 3);
  EXPECT_EQ(o.declarations_first_ns, -28'079'209'200);
  EXPECT_EQ(o.declarations_last_ns, -28'073'017'568);
}

TEST(HostThread, BacktracedLaunchesCountOnce) {
  // `kernscope host` picks the thread that launches most. sqlite3 on the export: one thread, 47,123
  // launch rows (cudaLaunchKernel[_v7000], cudaLaunchKernelExC_v11060, cuLaunchKernel[Ex]), of which
  // 1,980 lie inside a backtrace record of their correlation id and name (1,965 cudaLaunchKernel_v7000,
  // 15 cuLaunchKernel): 45,143 launches.
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_pysample_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  const HostProfile host = host_profile_of(*trace, {}, "", HostProfileOptions{});
  EXPECT_NE(host.thread_reason.find("(45143 launches)"), std::string::npos) << host.thread_reason;
}

TEST(Overview, BacktracedGraphLaunchesCountOnce) {
  // A backtraced cudaGraphLaunch is two rows of one correlation id (the backtrace record encloses
  // the call); a second launch has no backtrace: two launches.
  testing::SyntheticTrace s;
  s.api("cudaGraphLaunch", 0, 50, 3);
  s.api("cudaGraphLaunch_v10000", 5, 45, 3);
  s.api("cudaGraphLaunch_v10000", 100, 120, 4);
  EXPECT_EQ(describe(s.trace).graph_launches, 2);
}

// TraceLens's vLLM piecewise-graph trace (roctracer, MI300X): no kernel has a node id, but 361 of its
// 413 kernels carry the correlation id of one of its 25 hipGraphLaunch calls (../shared's realworld
// README, read with Python's json): the replays are seen, not "hidden".
TEST(Overview, GraphReplaysSeenByTheLaunchsCorrelationId) {
  auto trace = open_trace(
      (testing::fixtures_dir() / "kineto/tracelens__traces__inference__vllm_prefilldecode_piecewise__graph_execution.json.xz").string());
  ASSERT_TRUE(trace);
  const TraceOverview o = describe(*trace);
  EXPECT_EQ(o.graph_launches, 25);
  EXPECT_EQ(o.graph_node_kernels, 0);
  EXPECT_EQ(o.graph_replay_kernels, 361);
  for (const auto& m : o.notes) EXPECT_EQ(m.text.find("hidden"), std::string::npos) << m.text;
}

TEST(Overview, DeclarationsInsideTheSpanAreNotMentioned) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxDomainCreate, "domain", 50, kNoTime);
  s.nvtx(kNvtxPushPopRange, "step", 10, 100);
  s.api("cudaLaunchKernel_v7000", 20, 120, 1);
  const TraceOverview o = describe(s.trace);
  EXPECT_EQ(o.first_ns, 10);
  EXPECT_EQ(o.last_ns, 120);
  EXPECT_EQ(o.declarations_outside, 0);
  // A trace of declarations only keeps their times as its span.
  testing::SyntheticTrace only;
  only.nvtx(kNvtxDomainCreate, "domain", 50, kNoTime);
  const TraceOverview d = describe(only.trace);
  EXPECT_EQ(d.first_ns, 50);
  EXPECT_EQ(d.last_ns, 50);
  EXPECT_EQ(d.declarations_outside, 0);
}

}  // namespace
}  // namespace kernscope
