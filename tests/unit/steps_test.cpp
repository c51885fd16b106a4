// Steps and phases. On the llama fixture the right answers come from nsys's own outputs for the
// same file (gold/nvtx_pushpop_sum.csv and gold/nvtx_gpu_proj_sum.csv) and from the workload (one
// prefill and 64 decode steps per phase); on synthetic traces they hold by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/steps/step_chunks.hpp"
#include "analyses/trace_context.hpp"
#include "kernscope/open.hpp"
#include "kernscope/steps.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

TEST(StepsOnLlama, GroupsTpotAndLaunchesMatchNsys) {
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(s.steps.size(), 130u);
  ASSERT_EQ(s.groups.size(), 4u);
  EXPECT_EQ(s.groups[0].name, ":warmup:prefill");
  EXPECT_EQ(s.groups[3].name, ":measure:decode_step");
  EXPECT_EQ(s.groups[3].phase, Phase::kDecode);
  // nvtx_pushpop_sum gold: :measure:decode_step Instances 64, Med 13032846.5, Max 17372791.
  EXPECT_EQ(s.decode_wall.count, 64);
  EXPECT_DOUBLE_EQ(s.decode_wall.p50, 13032846.5);
  EXPECT_EQ(s.decode_wall.max, 17372791);
  // :measure:prefill: 12973771 ns.
  EXPECT_EQ(s.prefill_wall.max, 12973771);
  // nvtx_gpu_proj_sum gold: decode steps launch 695 GPU operations each (all kernels: no copies).
  // nvtx_gpu_proj_sum gold, the steps projected onto the GPU: :measure:decode_step Proj Med
  // 12943334.0, Min 12054059, Max 17290004, Total 842574631; :measure:prefill 12886343.
  const auto& decode = s.groups[3].gpu_span;
  EXPECT_EQ(decode.count, 64);
  EXPECT_DOUBLE_EQ(decode.p50, 12943334.0);
  EXPECT_EQ(decode.max, 17290004);
  std::int64_t total = 0, least = INT64_MAX;
  for (const auto& step : s.steps) {
    if (step.name != ":measure:decode_step") continue;
    total += step.gpu_span_ns;
    least = std::min(least, step.gpu_span_ns);
  }
  EXPECT_EQ(total, 842574631);
  EXPECT_EQ(least, 12054059);
  EXPECT_EQ(s.groups[2].name, ":measure:prefill");
  EXPECT_EQ(s.groups[2].gpu_span.max, 12886343);
  // This loop synchronizes every step, so the GPU period is about the wall (a step plus the gap
  // to the next launch): never shorter than the step's own GPU span.
  EXPECT_EQ(s.decode_gpu_period.count, 63);
  EXPECT_GE(s.decode_gpu_period.p50, decode.p50);
  for (const auto& step : s.steps) {
    if (step.phase == Phase::kDecode) {
      EXPECT_EQ(step.kernels, 695) << step.name << " at " << step.start_ns;
    }
    EXPECT_LE(step.gpu_busy_ns, step.wall_ns);
    EXPECT_EQ(step.gpu_busy_ns + step.gpu_idle_ns, step.wall_ns);
  }
}

// The same workload under nsys --cudabacktrace=all:10000: each backtraced call is in the API table
// twice under one correlation id (cudaLaunchKernel and, inside its time, cudaLaunchKernel_v7000).
// A step still launches what it launched: nsys's nvtx_gpu_proj_sum gold gives 44,480 GPU operations
// over the 64 decode steps (Avg GPU Ops 695.0, all kernels), and sqlite3 on the export, counting
// launch calls (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel, cuLaunchKernelEx, any _vN)
// inside each step range on its thread and leaving out a call that another call with the same
// thread, id and base name encloses, gives 44,480 calls of 303,514,700 ns (46,358 and
// 332,605,517 ns counting both rows, what steps said before).
TEST(StepsOnLlama, BacktracedCallsCountOnce) {
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_pysample_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
  std::int64_t decode = 0, launches = 0, launch_ns = 0;
  for (const auto& step : s.steps) {
    if (step.phase != Phase::kDecode) continue;
    ++decode;
    launches += step.launches;
    launch_ns += step.launch_api_ns;
    EXPECT_EQ(step.launches, 695) << step.name << " at " << step.start_ns;
  }
  EXPECT_EQ(decode, 64);
  EXPECT_EQ(launches, 44'480);
  EXPECT_EQ(launch_ns, 303'514'700);
}

// By construction: a row nested in another with the same thread, correlation id and API family
// repeats that call; same id but disjoint in time, or another API, it is a call of its own.
// Numbered steps are one group; other names are their own group.
TEST(Steps, GroupNameTakesTheStepNumberOut) {
  EXPECT_EQ(step_group_name("ProfilerStep#12"), "ProfilerStep#N");
  EXPECT_EQ(step_group_name(":ProfilerStep#3"), ":ProfilerStep#N");
  EXPECT_EQ(step_group_name("warmup:decode_step"), "warmup:decode_step");
  EXPECT_EQ(step_group_name("step#"), "step#");          // no number
  EXPECT_EQ(step_group_name("batch#12a"), "batch#12a");  // not only digits after '#'
  EXPECT_EQ(step_group_name(""), "");
  // Engines' step names without their batch: SGLang's mode stays, vLLM's counts go.
  EXPECT_EQ(step_group_name("step[DECODE bs=32]"), "step[DECODE]");
  EXPECT_EQ(step_group_name(":step[EXTEND bs=15 toks=15360]"), ":step[EXTEND]");
  EXPECT_EQ(step_group_name("execute_260_context_1(256)_generation_4(4)"), "execute_context_N_generation_N");
  EXPECT_EQ(step_group_name("execute_context_1(888_788544)_generation_0(0)"), "execute_context_N_generation_N");
}

// TPOT's clock on hand-built decode loops: a single step whose GPU work outlives its range lasts
// until its GPU work ends (not its 100 ns range, not 0); synchronous steps read their wall.
TEST(Steps, TpotNeverReadsTheRangeOfAnAsynchronousStep) {
  testing::SyntheticTrace one;
  one.nvtx(kNvtxPushPopRange, "decode_step", 0, 100);
  one.api("cudaGraphLaunch_v10000", 10, 20, 1);
  one.kernel("gemv2T_kernel_val", 50, 10'000, 1);
  const auto r = analyze_steps(one.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.tpot.count, 1);
  EXPECT_DOUBLE_EQ(r.tpot.p50, 10'000);
  EXPECT_EQ(r.tpot_from, "step start to GPU end");
  testing::SyntheticTrace sync;
  for (int i = 0; i < 3; ++i) {
    const TimeNs t = i * 1'000;
    sync.nvtx(kNvtxPushPopRange, "decode_step", t, t + 900);
    sync.api("cudaLaunchKernel_v7000", t + 10, t + 20, 1 + i);
    sync.kernel("gemv2T_kernel_val", t + 100, t + 800, 1 + i);
  }
  const auto w = analyze_steps(sync.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(w.tpot.count, 3);
  EXPECT_DOUBLE_EQ(w.tpot.p50, 900);
  EXPECT_EQ(w.tpot_from, "step wall");
  EXPECT_EQ(w.tpot_samples, (std::vector<std::int64_t>{900, 900, 900}));
}

TEST(Steps, NestedRepeatOfACallCountsOnce) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000);
  s.api("cudaLaunchKernel", 10, 40, 1);          // the backtrace record, first
  s.api("cudaLaunchKernel_v7000", 12, 38, 1);    // the call itself, inside it
  s.api("cudaLaunchKernel_v7000", 52, 58, 2);    // the call itself first this time...
  s.api("cudaLaunchKernel", 50, 60, 2);          // ...then the record that encloses it
  s.api("cudaLaunchKernel_v7000", 100, 110, 3);  // one id, two calls apart in time: both count
  s.api("cudaLaunchKernel_v7000", 120, 130, 3);
  s.api("cudaMalloc_v3020", 200, 300, 4);        // another API inside a call of the same id: counts
  s.api("cudaLaunchKernel_v7000", 210, 220, 4);
  s.kernel("gemv2T_kernel_val", 400, 500, 1);
  s.kernel("gemv2T_kernel_val", 500, 600, 2);
  auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& st = r.steps[0];
  EXPECT_EQ(st.launches, 5);  // ids 1 and 2 once each, id 3 twice, the launch of id 4
  EXPECT_EQ(st.launch_api_ns, 30 + 10 + 10 + 10 + 10);  // the enclosing row's time for ids 1 and 2
  EXPECT_EQ(st.allocations, 1);
  EXPECT_EQ(st.kernels, 2);
}

// ApiLookup's join, by construction: every row of an id (the enclosing one found first); id 0 (no
// id) joins its first row only, so GPU ops without an id are not multiplied by the calls without one.
TEST(ApiLookup, JoinsEveryRowOfAnIdButNotRowsWithoutOne) {
  testing::SyntheticTrace s;
  s.api("cudaLaunchKernel_v7000", 12, 38, 5);
  s.api("cudaLaunchKernel", 10, 40, 5);
  for (int i = 0; i < 3; ++i) s.api("cudaStreamSynchronize", 100 + 10 * i, 105 + 10 * i, 0);
  const report::ApiLookup lookup(s.trace.api_calls);
  std::vector<RowIndex> rows;
  lookup.for_each_row(testing::global_pid(), 5, [&](RowIndex r) { rows.push_back(r); });
  EXPECT_EQ(rows, (std::vector<RowIndex>{1, 0}));
  EXPECT_TRUE(lookup.is_repeat(0, s.trace.strings));
  EXPECT_FALSE(lookup.is_repeat(1, s.trace.strings));
  rows.clear();
  lookup.for_each_row(testing::global_pid(), 0, [&](RowIndex r) { rows.push_back(r); });
  EXPECT_EQ(rows, (std::vector<RowIndex>{2}));
  EXPECT_FALSE(lookup.is_repeat(3, s.trace.strings));
}

TEST(Steps, NvtxStepsDecomposedByConstruction) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000);
  s.api("cudaLaunchKernel_v7000", 10, 20, 1);
  s.api("cudaLaunchKernel_v7000", 30, 40, 2);
  s.api("cudaStreamSynchronize_v3020", 50, 900, 3);
  s.api("cudaMalloc_v3020", 910, 920, 4);
  s.kernel("gemv2T_kernel_val", 100, 300, 1);
  s.kernel("gemv2T_kernel_val", 250, 400, 2);  // overlaps: busy is the union 100..400
  auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& st = r.steps[0];
  EXPECT_EQ(st.phase, Phase::kDecode);
  EXPECT_EQ(st.wall_ns, 1000);
  EXPECT_EQ(st.gpu_busy_ns, 300);
  EXPECT_EQ(st.gpu_idle_ns, 700);
  EXPECT_EQ(st.kernels, 2);
  EXPECT_EQ(st.kernel_ns, 350);
  EXPECT_EQ(st.launches, 2);
  EXPECT_EQ(st.launch_api_ns, 20);
  EXPECT_EQ(st.syncs, 1);
  EXPECT_EQ(st.sync_ns, 850);
  EXPECT_EQ(st.allocations, 1);
  EXPECT_EQ(st.class_ns.at("gemv"), 350);
}

// A CUDA-graph decode loop: each step's NVTX range ends right after the graph launch, its GPU work
// runs long after. The step wall is launch time; the analysis must say so.
TEST(Steps, AsynchronousStepsAreSaidToMeasureLaunchesNotTpot) {
  testing::SyntheticTrace s;
  for (int i = 0; i < 4; ++i) {
    const TimeNs t = i * 10'000;
    s.nvtx(kNvtxPushPopRange, "decode_step", t, t + 200);
    s.api("cudaGraphLaunch_v10000", t + 10, t + 150, 100 + i);
    s.kernel("gemv2T_kernel_val", t + 300, t + 3'300, 100 + i);
  }
  auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.decode_wall.count, 4);
  EXPECT_DOUBLE_EQ(r.decode_wall.p50, 200);
  EXPECT_DOUBLE_EQ(r.decode_kernel_ns.p50, 3000);
  // Projected onto the GPU: each step's work spans 3,000 ns and a step ends every 10,000 ns.
  EXPECT_EQ(r.steps[1].gpu_start_ns, 10'300);
  EXPECT_EQ(r.steps[1].gpu_end_ns, 13'300);
  EXPECT_EQ(r.steps[1].gpu_span_ns, 3'000);
  EXPECT_EQ(r.decode_gpu_period.count, 3);
  EXPECT_DOUBLE_EQ(r.decode_gpu_period.p50, 10'000);
  bool said = false;
  for (const auto& n : r.notes) {
    said |= n.kind == "asynchronous_decode_steps" && n.text.find("decode steps are asynchronous") != std::string::npos &&
            n.text.find("every 0.010 ms") != std::string::npos;
  }
  EXPECT_TRUE(said);
  // Synchronous steps (the constructed one above) get no such note.
  testing::SyntheticTrace sync;
  sync.nvtx(kNvtxPushPopRange, "decode_step", 0, 1000);
  sync.api("cudaLaunchKernel_v7000", 10, 20, 1);
  sync.kernel("gemv2T_kernel_val", 100, 300, 1);
  const auto sync_steps = analyze_steps(sync.trace, OpRuleSet::builtin(), {}).value();  // kept alive for the loop
  for (const auto& n : sync_steps.notes) {
    EXPECT_EQ(n.text.find("asynchronous"), std::string::npos) << n.text;
  }
}

// The same loop traced with whole-graph records: each execution is the step's GPU work (through its
// launch's correlation id), busy time, and a class of its own; the asynchronous note still comes.
TEST(Steps, WholeGraphExecutionsCountAsTheStepsGpuWork) {
  testing::SyntheticTrace s;
  for (int i = 0; i < 4; ++i) {
    const TimeNs t = i * 10'000;
    s.nvtx(kNvtxPushPopRange, "decode_step", t, t + 200);
    s.api("cudaGraphLaunch_v10000", t + 10, t + 150, 100 + i);
    s.graph_exec(t + 100, t + 3'100, 100 + i);
  }
  auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[0].kernels, 0);
  EXPECT_EQ(r.steps[0].kernel_ns, 3000);
  EXPECT_EQ(r.steps[0].class_ns.at("cuda graph (not itemized)"), 3000);
  EXPECT_EQ(r.steps[0].gpu_busy_ns, 100);  // the part of the execution inside the 200 ns range
  EXPECT_EQ(r.steps[0].graph_launches, 1);
  EXPECT_EQ(r.steps[2].gpu_span_ns, 3000);
  EXPECT_DOUBLE_EQ(r.decode_gpu_period.p50, 10'000);
  bool said = false;
  for (const auto& n : r.notes) said |= n.text.find("decode steps are asynchronous") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Steps, WithoutNvtxSplitsAtLongGapsAndReadsPhaseFromKernelMix) {
  // A GEMM-heavy burst, a 50 ms gap, then three GEMV-heavy bursts 20 ms apart.
  auto bursts = [](bool with_attention) {
    testing::SyntheticTrace s;
    const TimeNs ms = 1'000'000;
    for (int i = 0; i < 10; ++i) s.kernel("sm90_xmma_gemm_bf16", i * 10'000, i * 10'000 + 9'000);
    if (with_attention) s.kernel("flash_fwd_kernel", 95'000, 99'000);
    for (int step = 0; step < 3; ++step) {
      const TimeNs base = 50 * ms + step * 20 * ms;
      for (int i = 0; i < 10; ++i) s.kernel("gemvx::kernel", base + i * 2'000, base + i * 2'000 + 1'500);
      if (with_attention) s.kernel("flash_fwd_splitkv_kernel", base + 19'000, base + 19'800);
    }
    return s;
  };
  // GEMMs and GEMVs alone are no evidence of LLM inference (an HPC solver has both): plain steps.
  auto plain = analyze_steps(bursts(false).trace, OpRuleSet::builtin(), {}).value();
  EXPECT_NE(plain.method.find("heuristic"), std::string::npos);
  ASSERT_EQ(plain.steps.size(), 4u);
  for (const auto& st : plain.steps) EXPECT_EQ(st.phase, Phase::kUnknown);
  EXPECT_EQ(plain.decode_wall.count, 0);
  EXPECT_NE(plain.workload.kind, WorkloadKind::kLlmInference);
  // With attention kernels beside them it is LLM inference: phases from the kernel mix.
  auto llm = analyze_steps(bursts(true).trace, OpRuleSet::builtin(), {}).value();
  EXPECT_EQ(llm.workload.kind, WorkloadKind::kLlmInference);
  ASSERT_EQ(llm.steps.size(), 4u);
  EXPECT_EQ(llm.steps[0].phase, Phase::kPrefill);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(llm.steps[static_cast<std::size_t>(i)].phase, Phase::kDecode);
  EXPECT_EQ(llm.decode_wall.count, 3);
}

TEST(Steps, PhasesFromAttentionKernelsSayWhichEvidenceDecided) {
  // Four bursts of GPU work 50 ms apart, no annotations, each GEMV-heavy (the kernel mix alone
  // would call every one a decode). Burst 0 runs FlashInfer's prefill attention kernel, bursts 1-2
  // flash-attn's split-KV decode kernel, burst 3 FlashInfer's prefill and decode kernels side by
  // side (chunked prefill batched with decodes): prefill, decode, decode, mixed.
  testing::SyntheticTrace s;
  const TimeNs ms = 1'000'000;
  for (int step = 0; step < 4; ++step) {
    const TimeNs base = step * 50 * ms;
    for (int i = 0; i < 10; ++i) s.kernel("gemvx::kernel", base + i * 2'000, base + i * 2'000 + 1'500);
    if (step == 0) {
      s.kernel("BatchPrefillWithPagedKVCacheKernel", base + 21'000, base + 22'000);
    } else if (step < 3) {
      s.kernel("flash_fwd_splitkv_kernel", base + 21'000, base + 22'000);
    } else {
      s.kernel("BatchPrefillWithPagedKVCacheKernel", base + 21'000, base + 22'000);
      s.kernel("BatchDecodeWithPagedKVCacheKernel", base + 23'000, base + 24'000);
    }
  }
  auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.workload.kind, WorkloadKind::kLlmInference);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[0].phase, Phase::kPrefill);
  EXPECT_EQ(r.steps[1].phase, Phase::kDecode);
  EXPECT_EQ(r.steps[2].phase, Phase::kDecode);
  EXPECT_EQ(r.steps[3].phase, Phase::kMixed);
  EXPECT_NE(r.method.find("phases: 1 prefill, 2 decode, 1 mixed (4 from attention kernels)"), std::string::npos) << r.method;
}

TEST(Steps, StepRangeMustExist) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "iteration", 0, 100);
  s.kernel("k", 10, 20);
  StepOptions o;
  o.step_range = "nope";
  auto r = analyze_steps(s.trace, OpRuleSet::builtin(), o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  o.step_range = "iteration";
  EXPECT_EQ(analyze_steps(s.trace, OpRuleSet::builtin(), o).value().steps.size(), 1u);
}

// Which step a call on a step's edge belongs to, by the rule in steps.cpp (CallStepFinder): the last
// window of its thread that starts at or before the call's start, if the call also ends at or before
// that window's end (a window holds [start, end], both edges included). A kernel belongs to the step
// of its launching call, wherever it runs on the GPU: each kernel here runs 1,500 ns after its call,
// in the next step's window or none.
// Mutations seen failing (2026-11-27, restored): in CallStepFinder, looking up `a_.start_ns[i] - 1`
// instead of the call's start (a step starting on the call's start does not get it) fails calls 0
// and 2; `a_.end_ns[i] < windows_[w].end` instead of `<=` (a call ending on the step's end is
// outside it) fails calls 1 and 3.
TEST(StepEdges, ACallOnAStepsStartOrEndBelongsToTheStepThatHoldsItWhole) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "decode_step", 1000, 2000);  // step 0
  s.nvtx(kNvtxPushPopRange, "decode_step", 2000, 3000);  // step 1, starting where step 0 ends
  s.nvtx(kNvtxPushPopRange, "decode_step", 4000, 5000);  // step 2, after a gap
  struct Call {
    TimeNs start, end;
    std::int32_t step;
  };
  const std::vector<Call> calls = {
      {1000, 1010, 0},   // 0: starts on step 0's start
      {1990, 2000, 0},   // 1: ends on step 0's end, which is step 1's start
      {2000, 2010, 1},   // 2: starts on step 1's start, which is step 0's end
      {2990, 3000, 1},   // 3: ends on step 1's end
      {3000, 3010, -1},  // 4: starts on step 1's end (after it) where no step starts
      {3995, 4005, -1},  // 5: straddles step 2's start
      {4995, 5005, -1},  // 6: straddles step 2's end
  };
  std::vector<std::int32_t> want;
  for (std::uint32_t c = 0; c < calls.size(); ++c) {
    s.api("cudaLaunchKernel_v7000", calls[c].start, calls[c].end, c + 1);
    s.kernel("gemv2T_kernel_val", calls[c].end + 1500, calls[c].end + 1600, c + 1);
    want.push_back(calls[c].step);
  }
  const auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.kernel_step, want);
  for (std::size_t w = 0; w < 2; ++w) {
    EXPECT_EQ(r.steps[w].kernels, 2) << w;
    EXPECT_EQ(r.steps[w].launches, 2) << w;
    EXPECT_EQ(r.steps[w].launch_api_ns, 20) << w;
    EXPECT_EQ(r.steps[w].kernel_ns, 200) << w;
  }
  // Step 0's kernels run 2,510-2,610 and 3,500-3,600 (its projection), inside step 1's window.
  EXPECT_EQ(r.steps[0].gpu_start_ns, 2510);
  EXPECT_EQ(r.steps[0].gpu_end_ns, 3600);
  EXPECT_EQ(r.steps[2].kernels, 0);
  EXPECT_EQ(r.steps[2].launches, 0);
}

// Steps found in GPU time (no ranges, no launches in the trace): a GPU operation belongs to the
// window its start falls in, [start, end). The windows come from the kernel period: embed_kernel
// starts each of 6 passes of 4 kernels 1,000 ns apart, so step j is [1000 j, 1000 (j + 1)) (the
// last ends where its last kernel ends). A kernel on another stream ending on step 2's start is
// step 1's; one starting there is step 2's.
// Mutation seen failing (2026-11-27, restored): in window_of, upper_bound's `x < st.start_ns` made
// `x <= st.start_ns` (a window does not hold its own start) leaves the edge kernel and every
// pass's embed_kernel without a step.
TEST(StepEdges, AGpuOperationStartingOnAStepsStartIsThatSteps) {
  testing::SyntheticTrace s;
  for (TimeNs j = 0; j < 6; ++j) {
    const TimeNs base = 1000 * j;
    s.kernel("embed_kernel", base, base + 100);
    s.kernel("gemm_kernel_a", base + 200, base + 400);
    s.kernel("attention_kernel", base + 400, base + 600);
    s.kernel("gemm_kernel_b", base + 600, base + 900);
  }
  s.kernel("edge_kernel_before", 1950, 2000, 0, testing::global_pid(), 9);  // row 24
  s.kernel("edge_kernel_on", 2000, 2050, 0, testing::global_pid(), 9);      // row 25
  const auto r = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(r.steps.size(), 6u) << r.method;
  EXPECT_EQ(r.steps[2].start_ns, 2000);
  EXPECT_EQ(r.steps[1].end_ns, 2000);
  EXPECT_EQ(r.kernel_step[24], 1);
  EXPECT_EQ(r.kernel_step[25], 2);
  for (std::size_t j = 0; j < 6; ++j) {
    EXPECT_EQ(r.kernel_step[4 * j], static_cast<std::int32_t>(j)) << j;  // each embed_kernel, on its step's start
    EXPECT_EQ(r.steps[j].kernels, j == 1 || j == 2 ? 5 : 4) << j;
  }
}

// Every figure of a step that the per-chunk tallies add up, and where each GPU operation went.
void expect_same_steps(const StepAnalysis& got, const StepAnalysis& want, const std::string& how) {
  ASSERT_EQ(got.steps.size(), want.steps.size()) << how;
  for (std::size_t w = 0; w < want.steps.size(); ++w) {
    const Step& a = got.steps[w];
    const Step& b = want.steps[w];
    const std::string at = how + ", step " + std::to_string(w);
    EXPECT_EQ(a.kernels, b.kernels) << at;
    EXPECT_EQ(a.kernel_ns, b.kernel_ns) << at;
    EXPECT_EQ(a.launches, b.launches) << at;
    EXPECT_EQ(a.launch_api_ns, b.launch_api_ns) << at;
    EXPECT_EQ(a.syncs, b.syncs) << at;
    EXPECT_EQ(a.sync_ns, b.sync_ns) << at;
    EXPECT_EQ(a.allocations, b.allocations) << at;
    EXPECT_EQ(a.h2d_copies, b.h2d_copies) << at;
    EXPECT_EQ(a.d2h_copies, b.d2h_copies) << at;
    EXPECT_EQ(a.graph_launches, b.graph_launches) << at;
    EXPECT_EQ(a.gpu_start_ns, b.gpu_start_ns) << at;
    EXPECT_EQ(a.gpu_end_ns, b.gpu_end_ns) << at;
    EXPECT_EQ(a.gpu_span_ns, b.gpu_span_ns) << at;
    EXPECT_EQ(a.gpu_busy_ns, b.gpu_busy_ns) << at;
    EXPECT_EQ(a.class_ns, b.class_ns) << at;
    EXPECT_EQ(a.phase, b.phase) << at;
  }
  EXPECT_EQ(got.kernel_step, want.kernel_step) << how;
  EXPECT_EQ(got.memcpy_step, want.memcpy_step) << how;
  EXPECT_EQ(got.method, want.method) << how;
}

// The passes over API calls and kernels run in chunks of rows, each with its own tallies, merged in
// step order (steps.cpp); with the default chunking that needs 131,072 rows and a second core, so
// here the chunks are made small (StepChunking): 2 to 9 chunks of a trace of 6 steps whose calls
// come from two threads of the process, interleaved in row order (the autograd-like thread has no
// ranges of its own), and whose kernels overlap the next step's window. Every chunking must give
// what one chunk gives, and one chunk what the construction gives.
// Mutations seen failing (2026-11-27, restored): add_tally widening a step's projection only from the
// first chunk that has one (`if (t.any_gpu && s.gpu_end_ns == 0)`) passes the one-chunk checks and
// fails gpu_end_ns / gpu_span_ns of the 4-, 5-, 7- and 9-chunk runs; merging only chunk 0's tallies
// (`c < 1` in over_chunks' merge loop) fails kernels, launches, class times of every chunked run;
// add_tally setting the projection to the chunk's instead of widening it fails the one-chunk
// projection checks (each pass, kernels then copies, is merged on its own).
TEST(StepChunks, ChunkedPassesMergeToTheOneChunkResult) {
  testing::SyntheticTrace s;
  const std::int64_t main_thread = testing::global_tid(1), helper = testing::global_tid(2);
  std::uint32_t id = 0;
  for (TimeNs j = 0; j < 6; ++j) {
    const TimeNs t = 10'000 * j;
    s.nvtx(kNvtxPushPopRange, "decode_step", t, t + 8'000, main_thread);
    s.api("cudaMalloc_v3020", t + 100, t + 200, ++id, main_thread);
    s.api("cudaLaunchKernel_v7000", t + 300, t + 350, ++id, main_thread);
    s.kernel("ampere_sgemm_128x64_tn", t + 1'000, t + 2'000, id);
    s.api("cudaLaunchKernel_v7000", t + 400, t + 450, ++id, helper);  // the other thread, mid-step
    s.kernel("flash_fwd_kernel", t + 2'000, t + 2'500, id);
    s.api("cudaMemcpyAsync_v3020", t + 500, t + 560, ++id, main_thread);
    s.memcpy(t + 2'500, t + 2'700, 1, id);
    s.api("cudaLaunchKernel_v7000", t + 600, t + 650, ++id, helper);
    s.kernel("vectorized_elementwise_kernel", t + 2'700, t + 2'800, id);
    s.api("cudaLaunchKernel_v7000", t + 700, t + 750, ++id, main_thread);
    s.kernel("ampere_sgemm_128x64_tn", t + 7'500, t + 11'000, id);  // runs on into the next step's window
    s.api("cudaStreamSynchronize_v3020", t + 800, t + 7'900, ++id, main_thread);
  }
  s.api("cudaLaunchKernel_v7000", 60'100, 60'150, ++id, main_thread);  // after the last step: no step's
  s.kernel("ampere_sgemm_128x64_tn", 60'200, 60'300, id);
  const OpRuleSet& rules = OpRuleSet::builtin();
  const TraceContext context(s.trace, rules);
  const auto one = analyze_steps_in_chunks(context, {}, StepChunking{.min_rows = 1, .cores = 1}).value();
  // One chunk, by construction: each step launches 4 kernels (2 from each thread), copies once,
  // allocates once, syncs once; its GPU work runs from its first kernel at +1,000 to its last's end
  // at +11,000.
  ASSERT_EQ(one.steps.size(), 6u);
  for (const Step& st : one.steps) {
    EXPECT_EQ(st.kernels, 4);
    EXPECT_EQ(st.kernel_ns, 1'000 + 500 + 100 + 3'500);
    EXPECT_EQ(st.launches, 4);
    EXPECT_EQ(st.launch_api_ns, 200);
    EXPECT_EQ(st.allocations, 1);
    EXPECT_EQ(st.syncs, 1);
    EXPECT_EQ(st.sync_ns, 7'100);
    EXPECT_EQ(st.h2d_copies, 1);
    EXPECT_EQ(st.gpu_start_ns, st.start_ns + 1'000);
    EXPECT_EQ(st.gpu_end_ns, st.start_ns + 11'000);
  }
  EXPECT_EQ(one.kernel_step.back(), -1);
  // The defaults (one chunk for so few rows) are the same.
  expect_same_steps(analyze_steps(s.trace, rules, {}).value(), one, "default chunking");
  for (const std::size_t chunks : {2, 3, 4, 5, 7, 9}) {
    const auto many = analyze_steps_in_chunks(context, {}, StepChunking{.min_rows = 1, .cores = chunks}).value();
    expect_same_steps(many, one, std::to_string(chunks) + " chunks");
  }
}

// The same on a real unannotated generate() trace (nsys), whose phases come from the request
// structure: each forward pass's kernel names (collected in chunks of kernels, joined per step), the
// class times of the workload's signals and the check that the steps hold their span's kernel time
// run in chunks too; every chunking must give the one-chunk steps, phases and method. With the
// default 64 k rows a chunk, only exports past 131,072 kernels take these paths.
// Mutation seen failing (2026-12-07, restored): keeping only a step's first run of kernel names
// (`if (!names.empty()) continue;` in the join) fails the phases of the chunked runs, and the
// attention classes named after them.
TEST(StepChunks, ChunkedPassesOnAGenerateTraceGiveTheOneChunkStepsAndPhases) {
  auto trace = open_trace((testing::fixtures_dir() / "hf_generate/dense_bs1_nsys.nsys.sqlite.xz").string());
  ASSERT_TRUE(trace) << trace.error().message;
  const TraceContext context(*trace, OpRuleSet::builtin());
  const auto one = analyze_steps_in_chunks(context, {}, StepChunking{.min_rows = 1, .cores = 1}).value();
  // What the program did (dense_bs1_nsys.truth.json): 3 generate() calls of 10 new tokens, 30
  // forward passes, each call's first a prefill of its 64-token prompt; the trace tells the phases
  // by the request structure.
  ASSERT_EQ(one.steps.size(), 30u);
  EXPECT_EQ(std::count_if(one.steps.begin(), one.steps.end(), [](const Step& st) { return st.phase == Phase::kPrefill; }), 3);
  EXPECT_NE(one.method.find("30 from request structure"), std::string::npos) << one.method;
  expect_same_steps(analyze_steps(*trace, OpRuleSet::builtin(), {}).value(), one, "default chunking");
  for (const std::size_t chunks : {2, 3, 7, 16}) {
    const auto many = analyze_steps_in_chunks(context, {}, StepChunking{.min_rows = 1, .cores = chunks}).value();
    expect_same_steps(many, one, std::to_string(chunks) + " chunks");
  }
}

}  // namespace
}  // namespace kernscope
