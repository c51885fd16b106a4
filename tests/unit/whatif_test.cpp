// What-if replays of steps built by hand: each prediction below is worked out in the comments from
// the model in whatif.hpp, before kernscope runs. Times are in ns; "k" is a thousand.
#include <gtest/gtest.h>

#include <memory>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/trace_context.hpp"
#include "kernscope/steps.hpp"
#include "analyses/whatif/whatif.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

constexpr TimeNs k = 1000;

WhatIfResult replay(const testing::SyntheticTrace& s, std::vector<std::string> changes) {
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  WhatIfOptions options;
  for (const auto& c : changes) options.changes.push_back(parse_whatif_change(c).value());
  return what_if(s.trace, OpRuleSet::builtin(), steps, accounting, options);
}

std::int64_t predicted(const WhatIfResult& r) {
  EXPECT_EQ(r.steps.size(), 1u);
  return r.steps.empty() ? -1 : r.steps[0].predicted_ns;
}

// One step [0, 600k) on thread 1: a launch [10k, 20k) of a kernel [30k, 500k), then
// cudaStreamSynchronize [20k, 505k) (it returns 5k after the kernel ends), then 95k of the host's
// own work until the range ends at 600k. The step completes at 600k.
// no-sync: the sync costs its return latency, 5k: [20k, 25k); the host's 95k follow: the range ends
// at 120k while the kernel still ends at 500k (its launch's 20k delay after the launch's start).
// The step completes at 500k: 100k saved, the host work the sync kept from overlapping the
// kernel, not the 485k the sync blocked.
testing::SyntheticTrace sync_on_the_critical_path() {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 600 * k);
  s.api("cudaLaunchKernel_v7000", 10 * k, 20 * k, 1);
  s.api("cudaStreamSynchronize_v3020", 20 * k, 505 * k, 0);
  s.kernel("gemv2T_kernel_val", 30 * k, 500 * k, 1);
  return s;
}

TEST(WhatIf, SyncOnTheCriticalPathSavesTheWorkBehindIt) {
  const testing::SyntheticTrace s = sync_on_the_critical_path();
  const auto none = replay(s, {});
  EXPECT_EQ(none.steps.at(0).traced_ns, 600 * k);
  EXPECT_EQ(predicted(none), 600 * k);
  // The path without a change: the kernel (470k), its launch (20k from the launch's start), the
  // 10k before the launch, the sync's 5k return and the 95k after it.
  const PathAccount& path = none.steps.at(0).path;
  EXPECT_EQ(path.ns, 600 * k);
  EXPECT_EQ(path.parts.at("gpu.gemv"), 470 * k);
  EXPECT_EQ(path.parts.at("blocked.cudaStreamSynchronize"), 5 * k);
  EXPECT_EQ(path.parts.at("host.framework"), 95 * k + 10 * k);
  EXPECT_EQ(path.parts.at("host.launch"), 20 * k);
  EXPECT_EQ(predicted(replay(s, {"no-sync"})), 500 * k);
  EXPECT_EQ(predicted(replay(s, {"no-sync=cudaStreamSynchronize"})), 500 * k);
  EXPECT_EQ(predicted(replay(s, {"no-sync=cudaDeviceSynchronize"})), 600 * k);  // not that call: nothing changes
}

// A change with nothing to change says so in a note of its own kind (a script filters on the kind,
// never on the sentence): the step above has a cudaStreamSynchronize, no cudaDeviceSynchronize.
TEST(WhatIf, AChangeWithNothingToChangeIsNotedByKind) {
  const testing::SyntheticTrace s = sync_on_the_critical_path();
  const auto r = replay(s, {"no-sync=cudaDeviceSynchronize"});
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].kind, "change_not_applicable");
  EXPECT_EQ(r.notes[0].severity, NoteSeverity::kInfo);
  EXPECT_EQ(r.notes[0].count, 1);
  EXPECT_EQ(r.notes[0].text, "no-sync: no blocking synchronization named cudaDeviceSynchronize waits inside a step");
  // The change that applies leaves no such note.
  for (const auto& n : replay(s, {"no-sync"}).notes) EXPECT_NE(n.kind, "change_not_applicable") << n.text;
}

// The same, but the range ends 1k after the sync: the sync waited for the kernel, which is the
// critical path. no-sync: the range ends at 25k + 1k, the kernel still at 500k: 6k saved.
// Replays that share a graph cache (report prices several changes of the same steps) give what
// each gives on its own graph: the cached graph is copied, so one change's edits do not reach the
// next. The step of SyncOnTheCriticalPath..: no-sync saves 100k, graphs nothing, and a no-sync
// replayed after the graphs one from the same cache still saves its 100k.
TEST(WhatIf, ReplaysSharingAGraphCacheEachStartFromTheTracedGraph) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 600 * k);
  s.api("cudaLaunchKernel_v7000", 10 * k, 20 * k, 1);
  s.kernel("gemv2T_kernel_val", 30 * k, 500 * k, 1);
  s.api("cudaStreamSynchronize_v3020", 20 * k, 505 * k, 0);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  const TraceContext context(s.trace, OpRuleSet::builtin());
  auto cache = make_whatif_graph_cache();
  auto run = [&](const char* change, bool cached) {
    WhatIfOptions options;
    options.changes.push_back(parse_whatif_change(change).value());
    if (cached) options.graphs = cache;
    return predicted(what_if(context, steps, accounting, options));
  };
  const std::int64_t no_sync = run("no-sync", false), graphs = run("graphs", false);
  EXPECT_EQ(no_sync, 500 * k);
  EXPECT_EQ(run("graphs", true), graphs);
  EXPECT_EQ(run("no-sync", true), no_sync);
  EXPECT_EQ(run("graphs", true), graphs);
}

TEST(WhatIf, SyncOffTheCriticalPathSavesNothingButItsReturn) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 506 * k);
  s.api("cudaLaunchKernel_v7000", 10 * k, 20 * k, 1);
  s.api("cudaStreamSynchronize_v3020", 20 * k, 505 * k, 0);
  s.kernel("gemv2T_kernel_val", 30 * k, 500 * k, 1);
  EXPECT_EQ(predicted(replay(s, {})), 506 * k);
  EXPECT_EQ(predicted(replay(s, {"no-sync"})), 500 * k);
}

// A launch gap hidden by a long kernel: L1 [0, 10k) launches K1 [15k, 900k); L2 [100k, 110k)
// launches K2, queued behind K1: [901k, 950k). The range [0, 120k) ends before the GPU: the step
// completes at 950k. graphs: L1 becomes the graph launch (8k, the trace has none), L2 goes, the
// 90k between them stays (100 us or more: not a launch's framework time). K1 keeps its 15k after
// the launch: [15k, 900k); K2 follows it by the graph's node gap (448, data/whatif_calibration.tsv
// for any GPU): [900.448k, 949.448k). 552 ns saved: the launch gap was hidden.
TEST(WhatIf, GraphsSaveNothingWhereALongKernelHidesTheLaunchGap) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 120 * k);
  s.api("cudaLaunchKernel_v7000", 0, 10 * k, 1);
  s.api("cudaLaunchKernel_v7000", 100 * k, 110 * k, 2);
  s.kernel("ampere_sgemm_128x64_nn", 15 * k, 900 * k, 1);
  s.kernel("ampere_sgemm_128x64_nn", 901 * k, 950 * k, 2);
  EXPECT_EQ(predicted(replay(s, {})), 950 * k);
  EXPECT_EQ(predicted(replay(s, {"graphs"})), 949 * k + 448);
  // scale=gemm:0.5: K1 takes 442.5k: [15k, 457.5k); K2 waits for it (its stream's observed 1k):
  // [458.5k, 483k) (K2 is a GEMM as well: 24.5k).
  EXPECT_EQ(predicted(replay(s, {"scale=gemm:0.5"})), 483 * k);
}

// An exposed launch gap: L1 [0, 10k) launches K1 [15k, 50k); 60k of framework time; L2 [70k, 80k)
// launches K2 [85k, 135k) onto an idle stream; the range ends at 140k. graphs: the graph launch
// [0, 8k), the 60k gap (under 100 us, beside launches) and L2 go, the range's end follows at 8k;
// K1 [15k, 50k); K2 after K1 by the node gap: [50.448k, 100.448k). 39.552k saved.
TEST(WhatIf, GraphsSaveAnExposedLaunchGap) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 140 * k);
  s.api("cudaLaunchKernel_v7000", 0, 10 * k, 1);
  s.api("cudaLaunchKernel_v7000", 70 * k, 80 * k, 2);
  s.kernel("ampere_sgemm_128x64_nn", 15 * k, 50 * k, 1);
  s.kernel("ampere_sgemm_128x64_nn", 85 * k, 135 * k, 2);
  const auto none = replay(s, {});
  EXPECT_EQ(predicted(none), 140 * k);
  EXPECT_EQ(predicted(replay(s, {"graphs"})), 100 * k + 448);
  // host=0.5: the 60k gap takes 30k: L2 [40k, 50k), K2 15k after it: [55k, 105k); the range's end
  // 60k after L2 is 30k: at 80k. The step completes at 105k.
  EXPECT_EQ(predicted(replay(s, {"host=0.5"})), 105 * k);
}

// An analysis's own edits (the perfect-router estimate's added expert iterations), on the trace
// above: 20k more host work before the first call at or after 70k (L2) and 10k more GPU work on what
// it launches (K2). L2 [90k, 100k); K2 15k after its launch, 60k long: [105k, 165k); the range ends
// 60k after L2, at 160k. The step completes at 165k. An edit outside the replayed window is not
// this replay's; one inside it after every call changes nothing and is said in the notes.
TEST(WhatIf, EditsAddHostWorkBeforeACallAndGpuWorkToWhatItLaunches) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 140 * k);
  s.api("cudaLaunchKernel_v7000", 0, 10 * k, 1);
  s.api("cudaLaunchKernel_v7000", 70 * k, 80 * k, 2);
  s.kernel("ampere_sgemm_128x64_nn", 15 * k, 50 * k, 1);
  s.kernel("ampere_sgemm_128x64_nn", 85 * k, 135 * k, 2);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  const auto accounting = account_steps(s.trace, OpRuleSet::builtin(), steps);
  WhatIfOptions options;
  options.edits.push_back({testing::global_tid(1), 70 * k, 20 * k, 10 * k});
  EXPECT_EQ(predicted(what_if(s.trace, OpRuleSet::builtin(), steps, accounting, options)), 165 * k);
  options.edits = {{testing::global_tid(1), 70 * k, -100 * k, 0}};
  // The 60k gap cannot go below nothing: L2 [10k, 20k), the range's end 60k after L2 at 80k; K2
  // could start 15k after L2 but queues behind K1 on their stream: [50k, 100k).
  EXPECT_EQ(predicted(what_if(s.trace, OpRuleSet::builtin(), steps, accounting, options)), 100 * k);
  // Outside the replayed window (after the step, or before it): not this replay's, nothing changes.
  options.edits = {{testing::global_tid(1), 500 * k, 20 * k, 0}, {testing::global_tid(1), -5 * k, 20 * k, 0}};
  EXPECT_EQ(predicted(what_if(s.trace, OpRuleSet::builtin(), steps, accounting, options)), 140 * k);
  // Inside it but after the thread's last call: said in the notes, nothing changes.
  options.edits = {{testing::global_tid(1), 100 * k, 20 * k, 0}};
  const auto missed = what_if(s.trace, OpRuleSet::builtin(), steps, accounting, options);
  EXPECT_EQ(predicted(missed), 140 * k);
  ASSERT_FALSE(missed.notes.empty());
  EXPECT_EQ(missed.notes.back().kind, "edits_without_call");
  EXPECT_NE(missed.notes.back().text.find("found no call"), std::string::npos);
}

// A synchronous pageable copy: cudaMemcpy [0, 100k) copies [5k, 95k) (1 MiB, host to device);
// L2 [100k, 110k) launches a kernel [115k, 300k) on the same stream; the range ends at 310k.
// overlap-copies: the call returns after its 5k return latency, L2 follows at [5k, 15k), the
// range's end 200k later at 215k; the copy starts 5k after its call, on its own stream, at its
// traced speed (no pinned copy in the trace, no calibration for "Test GPU"): [5k, 95k); the kernel
// still reads what it copied: [95k, 280k). 30k saved.
TEST(WhatIf, OverlappedCopiesStillEndBeforeTheirReader) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 310 * k);
  s.api("cudaMemcpy_v3020", 0, 100 * k, 1);
  s.api("cudaLaunchKernel_v7000", 100 * k, 110 * k, 2);
  s.memcpy(5 * k, 95 * k, 1, 1, /*src pageable*/ 0, 2);
  s.kernel("gemv2T_kernel_val", 115 * k, 300 * k, 2, testing::global_pid(), 8);
  EXPECT_EQ(predicted(replay(s, {})), 310 * k);
  const auto r = replay(s, {"overlap-copies"});
  EXPECT_EQ(predicted(r), 280 * k);
  ASSERT_FALSE(r.notes.empty());  // says the pageable copy kept its speed
  EXPECT_EQ(r.notes.back().kind, "pinned_speed_unmeasured");
}

// A collective between two GEMMs on one stream: L1 [0, 10k) launches K1 [15k, 100k); L2 [10k, 20k)
// an all-reduce, queued behind it: [101k, 201k); L3 [20k, 30k) K3, queued: [202k, 250k). The range
// [0, 40k) ends first: the step completes at 250k. overlap-comm: the all-reduce moves to its own
// stream, after K1 by the queue gap (1k): [101k, 201k); K3 follows K1 on the old stream by 1k:
// [101k, 149k). The step completes with the all-reduce at 201k: K3 hidden under it, 49k saved.
TEST(WhatIf, OverlappedCollectivesLetTheNextKernelRun) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 40 * k);
  s.api("cudaLaunchKernel_v7000", 0, 10 * k, 1);
  s.api("cudaLaunchKernel_v7000", 10 * k, 20 * k, 2);
  s.api("cudaLaunchKernel_v7000", 20 * k, 30 * k, 3);
  s.kernel("ampere_sgemm_128x64_nn", 15 * k, 100 * k, 1);
  s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 101 * k, 201 * k, 2);
  s.kernel("ampere_sgemm_128x64_nn", 202 * k, 250 * k, 3);
  EXPECT_EQ(predicted(replay(s, {})), 250 * k);
  EXPECT_EQ(predicted(replay(s, {"overlap-comm"})), 201 * k);
}

// Two processes of one trace (a tensor-parallel pair, one clock), each a step [0, 910k) on its own
// thread: a launch [10k, 20k) of a GEMM from 30k, a launch [20k, 30k) of an all-reduce queued behind
// it, a cudaStreamSynchronize [30k, 905k) that returns 5k after the all-reduce ends, then 5k of host
// work. Rank A's GEMM [30k, 430k) is faster than rank B's [30k, 800k): A's all-reduce [430k, 900k)
// waits for B's to begin [800k, 900k); both end at 900k (transfer 100k after the last arrival).
// scale=gemm:0.5: B's GEMM takes 385k, B arrives at 415k, the all-reduce ends at 515k on both ranks,
// the syncs return at 520k, the ranges end at 525k: both steps 525k. Replayed apart, A would have
// kept its traced 470k of waiting after its own earlier arrival at 230k (A's step 710k).
TEST(WhatIf, CollectivesOfTheRanksOfOneTraceWaitForEachOther) {
  testing::SyntheticTrace s;
  for (const auto& [pid, gemm_end] : {std::pair{100, 430 * k}, std::pair{200, 800 * k}}) {
    const std::int64_t thread = testing::global_tid(1, pid);
    const auto c = static_cast<std::uint32_t>(pid);  // correlation ids of the two launches: pid, pid + 1
    s.nvtx(kNvtxPushPopRange, "decode_step", 0, 910 * k, thread);
    s.api("cudaLaunchKernel_v7000", 10 * k, 20 * k, c, thread);
    s.api("cudaLaunchKernel_v7000", 20 * k, 30 * k, c + 1, thread);
    s.api("cudaStreamSynchronize_v3020", 30 * k, 905 * k, 0, thread);
    s.kernel("ampere_sgemm_128x64_nn", 30 * k, gemm_end, c, testing::global_pid(pid));
    s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096UL>)", gemm_end, 900 * k, c + 1,
             testing::global_pid(pid));
  }
  const auto none = replay(s, {});
  ASSERT_EQ(none.steps.size(), 2u);
  for (const auto& st : none.steps) EXPECT_EQ(st.predicted_ns, st.traced_ns);
  EXPECT_NE(std::find_if(none.notes.begin(), none.notes.end(),
                         [](const Note& n) { return n.text.find("2 processes replayed together: 1 collective") != std::string::npos; }),
            none.notes.end());
  const auto faster = replay(s, {"scale=gemm:0.5"});
  ASSERT_EQ(faster.steps.size(), 2u);
  EXPECT_EQ(faster.steps[0].predicted_ns, 525 * k);
  EXPECT_EQ(faster.steps[1].predicted_ns, 525 * k);
  // Both steps' critical paths run through rank B: its host's 10k and launch's 20k, its GEMM (385k),
  // the all-reduce's 100k after B arrived, the sync's 5k return and 5k of host work. Rank A's own
  // faster GEMM is off its path: A waited for B.
  for (const auto& st : faster.steps) {
    EXPECT_EQ(st.path.ns, 525 * k);
    EXPECT_EQ(st.path.parts.at("gpu.gemm"), 385 * k);
    EXPECT_EQ(st.path.parts.at("communication.collectives"), 100 * k);
    EXPECT_EQ(st.path.parts.at("host.launch"), 20 * k);
    EXPECT_EQ(st.path.parts.at("host.framework"), 15 * k);
    EXPECT_EQ(st.path.parts.at("blocked.cudaStreamSynchronize"), 5 * k);
  }
}

// The same two ranks, each in a file of its own whose clock reads rank B 7,000k later than rank A's:
// given B's offset (what `kernscope ranks` estimates from the collectives' ends), the ranks replay
// as in one trace (525k each with gemm:0.5), and each result is in its own trace's clock. Without
// the offset B's all-reduce starts (7,800k) after A's ended (900k): not one collective, left
// unlinked, and A replays alone: its GEMM [30k, 230k), its all-reduce's 470k [230k, 700k), the
// sync's 5k return and 5k of host work: 710k.
TEST(WhatIf, RanksInFilesOfTheirOwnReplayTogetherOnceTheirClocksAreAligned) {
  const TimeNs skew = 7000 * k;
  std::vector<testing::SyntheticTrace> files(2);
  for (int r = 0; r < 2; ++r) {
    const TimeNs t0 = r == 0 ? 0 : skew;
    const TimeNs gemm_end = r == 0 ? 430 * k : 800 * k;
    testing::SyntheticTrace& s = files[static_cast<std::size_t>(r)];
    const std::int64_t thread = testing::global_tid(1, 100);
    s.nvtx(kNvtxPushPopRange, "decode_step", t0, t0 + 910 * k, thread);
    s.api("cudaLaunchKernel_v7000", t0 + 10 * k, t0 + 20 * k, 1, thread);
    s.api("cudaLaunchKernel_v7000", t0 + 20 * k, t0 + 30 * k, 2, thread);
    s.api("cudaStreamSynchronize_v3020", t0 + 30 * k, t0 + 905 * k, 0, thread);
    s.kernel("ampere_sgemm_128x64_nn", t0 + 30 * k, t0 + gemm_end, 1, testing::global_pid(100));
    s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096UL>)", t0 + gemm_end, t0 + 900 * k, 2,
             testing::global_pid(100));
  }
  std::vector<std::unique_ptr<TraceContext>> contexts;
  std::vector<StepAnalysis> steps;
  std::vector<StepAccounting> accountings;
  for (const auto& s : files) {
    contexts.push_back(std::make_unique<TraceContext>(s.trace, OpRuleSet::builtin()));
    steps.push_back(analyze_steps(*contexts.back(), {}).value());
  }
  for (std::size_t r = 0; r < 2; ++r) accountings.push_back(account_steps(*contexts[r], steps[r]));
  auto together = [&](std::int64_t offset_b, const std::vector<std::string>& changes) {
    WhatIfOptions options;
    for (const auto& c : changes) options.changes.push_back(parse_whatif_change(c).value());
    std::vector<WhatIfTrace> traces;
    for (std::size_t r = 0; r < 2; ++r) traces.push_back(WhatIfTrace{contexts[r].get(), &steps[r], &accountings[r], r == 0 ? 0 : offset_b, {}});
    return what_if_together(traces, options);
  };
  const auto none = together(skew, {});
  ASSERT_EQ(none.size(), 2u);
  ASSERT_EQ(none[1].steps.size(), 1u);
  EXPECT_EQ(none[1].steps[0].start, skew);  // rank B's own clock
  EXPECT_EQ(none[1].steps[0].completion, skew + 910 * k);
  EXPECT_EQ(none[0].steps.at(0).predicted_ns, 910 * k);
  const auto faster = together(skew, {"scale=gemm:0.5"});
  for (const auto& rank : faster) {
    ASSERT_EQ(rank.steps.size(), 1u);
    EXPECT_EQ(rank.steps[0].predicted_ns, 525 * k);
    EXPECT_EQ(rank.steps[0].path.parts.at("gpu.gemm"), 385 * k);  // rank B's GEMM, on both paths
    EXPECT_NE(std::find_if(rank.notes.begin(), rank.notes.end(),
                           [](const Note& n) { return n.text.find("2 processes of 2 traces replayed together") != std::string::npos; }),
              rank.notes.end());
  }
  const auto misaligned = together(0, {"scale=gemm:0.5"});
  EXPECT_EQ(misaligned[0].steps.at(0).predicted_ns, 710 * k);
  EXPECT_NE(std::find_if(misaligned[0].notes.begin(), misaligned[0].notes.end(),
                         [](const Note& n) { return n.text.find("collectives left unlinked: 1 calls") != std::string::npos; }),
            misaligned[0].notes.end());
}

// scale=attention_decode takes the attention kernels `ops` names so: those whose name says decode,
// and generic attention kernels (flash_fwd_kernel) in decode steps. One decode step [0, 120k): the
// launch [0, 10k) of a generic attention kernel [15k, 415k); 0.5: it takes 200k, [15k, 215k).
// attention_prefill leaves it (a decode step's).
// Work queued before a profiler window opened (Kineto's active steps, TraceLens's Qwen traces): the
// window holds its kernels, not their launches. Kernels K_a [5k, 105k) and K_b [106k, 206k) carry
// correlation ids 5 and 6, which no call of the trace has; the window's first call, a
// cudaDeviceSynchronize [2k, 208k), has id 10: they were launched before it, and it waited for
// them (it returns 2k after K_b). Then a launch [210k, 220k) of K_c [225k, 325k); the range ends
// at 330k. scale=gemv:0.5: K_a [5k, 55k), K_b 1k after it [56k, 106k), the sync ends 2k later at
// 108k; the launch [110k, 120k); K_c 15k after it [135k, 185k); the range's end 110k after the
// launch, at 230k. Without the ids the sync would keep its 206k and the step its 330k.
TEST(WhatIf, WorkQueuedBeforeTheWindowIsWhatItsFirstSyncWaitsFor) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 330 * k);
  s.api("cudaDeviceSynchronize_v3020", 2 * k, 208 * k, 10);
  s.api("cudaLaunchKernel_v7000", 210 * k, 220 * k, 11);
  s.kernel("gemv2T_kernel_val", 5 * k, 105 * k, 5);
  s.kernel("gemv2T_kernel_val", 106 * k, 206 * k, 6);
  s.kernel("gemv2T_kernel_val", 225 * k, 325 * k, 11);
  EXPECT_EQ(predicted(replay(s, {})), 330 * k);
  EXPECT_EQ(predicted(replay(s, {"scale=gemv:0.5"})), 230 * k);
}

// A call shown returning before what it waited for ends. (1) A cudaMemcpy from pageable memory to
// the device [10k, 20k) returns once its data is staged; its copy runs [21.5k, 22.6k) (CUDA's API
// synchronization behaviour; the mordred trace's small copies). The call ends 2.6k before its
// copy, the range 30k later at 50k: replayed unchanged, it is 50k. scale=memcpy:0.5: the copy
// [21.5k, 22.05k), the call's end 2.6k before it at 19.45k, the range's at 49.45k (the copy is
// replayed before the call's end, though it starts after it). (2) A cudaDeviceSynchronize
// [20k, 125k) whose kernel [30k, 130k), launched [10k, 20k), ends 5k after it returns (a GPU clock
// ahead of the host's: 7.6 us on the MI300 Qwen trace); the range ends at 200k. scale=gemv:0.5:
// the kernel [30k, 80k), the sync 5k before its end at 75k, the range at 150k.
TEST(WhatIf, ACallShownReturningBeforeWhatItWaitedForEndsKeepsThatOffset) {
  testing::SyntheticTrace copy;
  copy.nvtx(kNvtxPushPopRange, "decode_step", 0, 50 * k);
  copy.api("cudaMemcpy_v3020", 10 * k, 20 * k, 1);
  copy.memcpy(21500, 22600, 1, 1, /*src_kind=*/0);
  EXPECT_EQ(predicted(replay(copy, {})), 50 * k);
  EXPECT_EQ(predicted(replay(copy, {"scale=memcpy:0.5"})), 49450);
  testing::SyntheticTrace skew;
  skew.nvtx(kNvtxPushPopRange, "decode_step", 0, 200 * k);
  skew.api("cudaLaunchKernel_v7000", 10 * k, 20 * k, 1);
  skew.api("cudaDeviceSynchronize_v3020", 20 * k, 125 * k, 2);
  skew.kernel("gemv2T_kernel_val", 30 * k, 130 * k, 1);
  EXPECT_EQ(predicted(replay(skew, {})), 200 * k);
  EXPECT_EQ(predicted(replay(skew, {"scale=gemv:0.5"})), 150 * k);
}

// A step found in GPU time (no range: one stretch of GPU work, split at idle gaps) still holds its
// calls: a launch [0, 10k) of K1 [15k, 100k), a launch [20k, 30k) of K2, queued behind it
// [100k, 500k), cudaStreamSynchronize [30k, 505k), 95k of host work, a launch [600k, 610k) of K3
// [615k, 700k). The step runs from K1's start to K3's end: 685k. no-sync: the sync costs its return
// latency [30k, 35k), the third launch follows 95k later at 130k, K3 waits for K2 (right behind it,
// as K2 followed K1) and runs [500k, 585k): 570k.
TEST(WhatIf, NoSyncReachesTheCallsOfStepsFoundInGpuTime) {
  testing::SyntheticTrace s;
  s.api("cudaLaunchKernel_v7000", 0, 10 * k, 1);
  s.api("cudaLaunchKernel_v7000", 20 * k, 30 * k, 2);
  s.api("cudaStreamSynchronize_v3020", 30 * k, 505 * k, 0);
  s.api("cudaLaunchKernel_v7000", 600 * k, 610 * k, 3);
  s.kernel("gemv2T_kernel_val", 15 * k, 100 * k, 1);
  s.kernel("gemv2T_kernel_val", 100 * k, 500 * k, 2);
  s.kernel("gemv2T_kernel_val", 615 * k, 700 * k, 3);
  EXPECT_EQ(predicted(replay(s, {})), 685 * k);
  EXPECT_EQ(predicted(replay(s, {"no-sync"})), 570 * k);
}

TEST(WhatIf, ScaleOfAPhaseClassTakesGenericAttentionInStepsOfThatPhase) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 120 * k);
  s.api("cudaLaunchKernel_v7000", 0, 10 * k, 1);
  s.kernel("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>", 15 * k, 415 * k, 1);
  EXPECT_EQ(predicted(replay(s, {})), 415 * k);
  EXPECT_EQ(predicted(replay(s, {"scale=attention_decode:0.5"})), 215 * k);
  EXPECT_EQ(predicted(replay(s, {"scale=attention_prefill:0.5"})), 415 * k);
}

TEST(WhatIf, ChangesAreParsedOrRefusedWithTheReason) {
  EXPECT_EQ(parse_whatif_change("scale=gemm:0.25").value().factor, 0.25);
  EXPECT_EQ(parse_whatif_change("scale=gemm:0.25").value().op_class, "gemm");
  EXPECT_EQ(parse_whatif_change("no-sync=cudaStreamSynchronize_v3020").value().call, "cudaStreamSynchronize");
  EXPECT_EQ(parse_whatif_change("host=0").value().factor, 0.0);
  // One vocabulary with `ops`: its memcpy (copy, the replay's earlier spelling, still taken) and
  // its phase-resolved attention classes; an unknown class or call is refused, naming the valid ones.
  EXPECT_EQ(parse_whatif_change("scale=copy:0.5").value().op_class, "memcpy");
  EXPECT_EQ(parse_whatif_change("scale=attention_decode:0.5").value().op_class, "attention_decode");
  EXPECT_NE(parse_whatif_change("scale=nosuch:0.5").error().message.find("one of: gemm, gemv"), std::string::npos);
  EXPECT_NE(parse_whatif_change("no-sync=cudaFoo").error().message.find("cudaStreamSynchronize"), std::string::npos);
  for (const char* bad : {"graph", "scale=gemm", "scale=gemm:x", "scale=gemm:-1", "host=", "host=nan", "overlap-copies=1", "",
                          "scale=nosuch:0.5", "scale=gemms:0.5", "no-sync=cudaFoo", "no-sync=cudaMemcpyAsync"}) {
    const auto c = parse_whatif_change(bad);
    ASSERT_FALSE(c.has_value()) << bad;
    EXPECT_NE(c.error().message.find("--change"), std::string::npos) << c.error().message;
  }
}

}  // namespace
}  // namespace kernscope
