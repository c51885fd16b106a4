// A step is one forward pass (analyses/steps/forward_passes.hpp). Synthetic traces of a
// Hugging Face generate() loop whose forwards are known by construction: each forward launches one
// token embedding lookup, its layers and one argmax; each generate() call launches a set-up kernel
// once (a cub scan, as generate()'s attention-mask cumsum does) and calls are 50 ms apart. The
// kernel period alone took each call for a step (the widest regular spacing is the set-up kernel's:
// issue 44's `kernscope record` of generate() gave 4 steps of ~5,559 kernels and TPOT 267 ms).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analyses/steps/step_latency.hpp"
#include "analyses/steps/step_windows.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/steps.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

using testing::SyntheticTrace;

constexpr const char* kEmbedding = "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>";
constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1";
constexpr const char* kArgmax = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>>";
constexpr const char* kRouterTopk = "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>";
constexpr const char* kExpertGather = "void at::native::index_kernel_impl<at::native::OpaqueType<2>>";
constexpr const char* kMaskScan = "void cub::DeviceScanInitKernel<cub::ScanTileState<long, true>>";

struct Loop {
  int calls = 3, tokens = 6, layers = 4;
  bool moe = false;                  // each layer routes: a top-k and an expert gather
  TimeNs cold_pause_ns = 0;          // a host pause inside the very first forward (lazy set-up)
  TimeNs gap_ns = 50'000'000;        // between generate() calls
  TimeNs setup_ns = 200'000;         // generate()'s Python between its set-up kernel and the first forward
  TimeNs before_first_call_ns = 0;   // Python after the thread wakes, before the call's first CUDA call
  bool cpu_clocks = false;           // the thread's CPU stretches: idle over each gap, busy otherwise
  bool token_copies = false;         // each forward copies its token to the host after the argmax
  TimeNs copy_returns_ns = 60'000;   // after the argmax: the copy's call returns
  TimeNs copy_lands_ns = 50'000;     // after the argmax: the copy ends on the GPU
};

struct Built {
  SyntheticTrace t;
  std::vector<TimeNs> forward_launch;  // each forward's embedding launch
  std::vector<TimeNs> call_start;      // each call's first launch (its set-up kernel)
  std::vector<TimeNs> wake;            // where the thread woke for each call
  std::vector<TimeNs> token_on_host;   // each forward's token copy returning (token_copies)
};

Built build(const Loop& loop) {
  Built b;
  TimeNs now = 1'000'000'000;
  std::uint32_t correlation = 1;
  const auto launch = [&](const char* name) {
    b.t.api("cudaLaunchKernel", now, now + 5'000, correlation);
    b.t.kernel(name, now + 10'000, now + 30'000, correlation);
    ++correlation;
    now += 30'000;
  };
  TimeNs asleep = 0;  // where the thread went to sleep before this call (0: the first call)
  for (int c = 0; c < loop.calls; ++c) {
    b.wake.push_back(now);
    if (loop.cpu_clocks && asleep != 0) b.t.thread_cpu(asleep, now, false);
    now += loop.before_first_call_ns;
    b.call_start.push_back(now);
    launch(kMaskScan);
    now += loop.setup_ns;  // generate()'s Python set-up
    for (int f = 0; f < loop.tokens; ++f) {
      b.forward_launch.push_back(now);
      launch(kEmbedding);
      if (c == 0 && f == 0) now += loop.cold_pause_ns;
      for (int l = 0; l < loop.layers; ++l) {
        launch(kGemm);
        if (loop.moe) {
          launch(kRouterTopk);
          launch(kExpertGather);
          launch(kGemm);
        }
        launch(kGemm);
      }
      launch(kGemm);  // the LM head
      launch(kArgmax);
      if (loop.token_copies) {  // the argmax ended at now; the copy starts after it, its call returns after it lands
        b.t.api("cudaMemcpyAsync", now, now + loop.copy_returns_ns, correlation);
        b.t.memcpy(now + 10'000, now + loop.copy_lands_ns, 2, correlation++);
        b.token_on_host.push_back(now + std::max(loop.copy_returns_ns, loop.copy_lands_ns));
        now += loop.copy_returns_ns;
      }
      b.t.api("cudaStreamSynchronize", now, now + 40'000, correlation++);
      now += 300'000;  // the loop's own Python between tokens
    }
    if (loop.cpu_clocks) b.t.thread_cpu(b.wake.back(), now, true);
    asleep = now;
    now += loop.gap_ns;
  }
  return b;
}

StepAnalysis steps_of(const Trace& trace) { return analyze_steps(trace, OpRuleSet::builtin(), {}).value(); }

TEST(ForwardPasses, EachGenerateCallIsOneStepPerToken) {
  const Built b = build({});
  const auto s = steps_of(b.t.trace);
  ASSERT_EQ(s.steps.size(), b.forward_launch.size()) << s.method;  // 18, not 3 calls
  EXPECT_NE(s.method.find("forward passes"), std::string::npos) << s.method;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const bool first_of_call = i % 6 == 0;
    // A call's first forward starts where the call does (its set-up is the request's), the others
    // at their embedding lookup.
    EXPECT_EQ(s.steps[i].start_ns, first_of_call ? b.call_start[i / 6] : b.forward_launch[i]) << i;
    // set-up + embedding + 4 layers x 2 GEMMs + LM head + argmax
    EXPECT_EQ(s.steps[i].kernels, first_of_call ? 1 + 1 + 4 * 2 + 1 + 1 : 1 + 4 * 2 + 1 + 1) << i;
  }
  // The 50 ms between calls lie between steps: no step is longer than a forward and its Python.
  for (const auto& step : s.steps) EXPECT_LT(step.wall_ns, 2'000'000) << step.start_ns;
  EXPECT_NE(s.method.find("2 gap(s) between requests"), std::string::npos) << s.method;
}

// generate()'s Python set-up between its first CUDA call and its first forward (2.5 ms, no CUDA
// call) is a quiet stretch longer than the 1 ms that makes a gap between requests: from CUDA calls
// alone the request starts at the first forward and loses it; where the thread's CPU clocks show it
// working there, the request starts at its first CUDA call, where it woke (0.1 ms before: below the
// clocks' resolution, not moved). By construction.
TEST(ForwardPasses, AThreadWorkingWithoutCudaCallsIsNotBetweenRequests) {
  Loop loop;
  loop.setup_ns = 2'500'000;
  loop.before_first_call_ns = 100'000;
  const Built cuda_only = build(loop);
  const auto a = steps_of(cuda_only.t.trace);
  ASSERT_EQ(a.steps.size(), cuda_only.forward_launch.size()) << a.method;
  EXPECT_EQ(a.steps[6].start_ns, cuda_only.forward_launch[6]) << a.method;  // the set-up lost
  loop.cpu_clocks = true;
  const Built clocked = build(loop);
  const auto b = steps_of(clocked.t.trace);
  ASSERT_EQ(b.steps.size(), clocked.forward_launch.size()) << b.method;
  for (int c = 1; c < 3; ++c) EXPECT_EQ(b.steps[6 * c].start_ns, clocked.call_start[c]) << c << ": " << b.method;
  EXPECT_NE(b.method.find("and the thread off its CPU"), std::string::npos) << b.method;
  EXPECT_NE(b.method.find("2 gap(s) between requests"), std::string::npos) << b.method;
}

// Passes in GPU time (no launches traced): a kernel of the process on another stream that began
// before a request's last pass ended and ran through the 50 ms before the next request kept the GPU
// busy, so that stretch is not a pause between requests; the other pause still is.
TEST(ForwardPasses, AKernelRunningIntoAQuietStretchIsNoGap) {
  Built b = build({});
  b.t.trace.api_calls = ApiCallColumns{};
  b.t.trace.present &= ~bit(EventKind::kApiCalls);
  b.t.trace.loaded &= ~bit(EventKind::kApiCalls);
  const auto plain = steps_of(b.t.trace);
  ASSERT_EQ(plain.steps.size(), b.forward_launch.size()) << plain.method;
  EXPECT_NE(plain.method.find("2 gap(s) between requests"), std::string::npos) << plain.method;
  // From 1 ms before the second call's last pass ended on the GPU to just before the third call's
  // first kernel: the gap search must see a kernel that started before the stretch it looks at.
  const auto& k = b.t.trace.kernels;
  TimeNs last_end_of_call_1 = 0;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (k.start_ns[i] < b.call_start[2]) last_end_of_call_1 = std::max(last_end_of_call_1, k.end_ns[i]);
  }
  b.t.kernel("ncclDevKernel_AllGather_RING_LL", last_end_of_call_1 - 1'000'000, b.call_start[2] + 5'000, 0, testing::global_pid(), 9);
  const auto busy = steps_of(b.t.trace);
  ASSERT_EQ(busy.steps.size(), b.forward_launch.size()) << busy.method;
  EXPECT_NE(busy.method.find("1 gap(s) between requests"), std::string::npos) << busy.method;
}

// Python work of a millisecond or more after the thread woke and before the call's first CUDA call
// (generate() given inputs already on the GPU) is the request's: it starts where the thread woke.
TEST(ForwardPasses, ARequestStartsWhereItsThreadWoke) {
  Loop loop;
  loop.before_first_call_ns = 3'000'000;
  loop.cpu_clocks = true;
  const Built b = build(loop);
  const auto s = steps_of(b.t.trace);
  ASSERT_EQ(s.steps.size(), b.forward_launch.size()) << s.method;
  for (int c = 1; c < 3; ++c) EXPECT_EQ(s.steps[6 * c].start_ns, b.wake[c]) << c << ": " << s.method;
  EXPECT_NE(s.method.find("2 request(s) start where their thread woke"), std::string::npos) << s.method;
  loop.cpu_clocks = false;
  const Built blind = build(loop);
  const auto t = steps_of(blind.t.trace);
  for (int c = 1; c < 3; ++c) EXPECT_EQ(t.steps[6 * c].start_ns, blind.call_start[c]) << c;
}

// A pass's token reaches the host at the return of its device-to-host copy after the argmax, not
// where the next pass starts (the loop's 0.3 ms of Python after it), and TTFT ends there. By
// construction.
TEST(ForwardPasses, AStepsTokenReachesTheHostAtItsCopy) {
  Loop loop;
  loop.token_copies = true;
  const Built b = build(loop);
  const auto s = steps_of(b.t.trace);
  ASSERT_EQ(s.steps.size(), b.forward_launch.size()) << s.method;
  for (std::size_t i = 0; i < s.steps.size(); ++i) EXPECT_EQ(s.steps[i].token_ns, b.token_on_host[i]) << i;
  loop.token_copies = false;
  for (const auto& step : steps_of(build(loop).t.trace).steps) EXPECT_EQ(step.token_ns, 0);  // no copy: not seen
  // A copy whose call returns at once but which lands 2 ms later, after the next pass began (and, for a
  // call's last pass, after its thread went quiet): its token reached the host outside the pass, so
  // it is not the pass's first token (TTFT then runs to the pass's end or its GPU work's).
  loop.token_copies = true;
  loop.copy_returns_ns = 5'000;
  loop.copy_lands_ns = 2'000'000;
  const Built late = build(loop);
  const auto l = steps_of(late.t.trace);
  ASSERT_EQ(l.steps.size(), late.forward_launch.size()) << l.method;
  for (std::size_t i = 0; i < l.steps.size(); ++i) {
    ASSERT_GT(late.token_on_host[i], l.steps[i].end_ns) << i;  // the case is what it says
    EXPECT_EQ(l.steps[i].token_ns, 0) << i;
  }
}

TEST(StepLatency, TtftEndsWhereTheTokenReachesTheHost) {
  StepAnalysis result;
  StepGroup forward;
  forward.name = "forward";
  forward.phase = Phase::kPrefill;
  result.groups.push_back(forward);
  std::vector<Step> steps(2);
  for (auto& st : steps) {
    st.name = st.group = "forward";
    st.phase = Phase::kPrefill;
  }
  steps[0].start_ns = 1'000;
  steps[0].end_ns = 9'000;
  steps[0].gpu_end_ns = 8'000;
  steps[0].token_ns = 7'000;  // seen: 6,000 ns
  steps[1].start_ns = 10'000;
  steps[1].end_ns = 14'000;
  steps[1].gpu_end_ns = 15'000;  // not seen: until the later of its end and its GPU work's, 5,000 ns
  read_ttft(steps, result);
  EXPECT_EQ(result.ttft_samples, (std::vector<std::int64_t>{6'000, 5'000}));
}

TEST(ForwardPasses, RouterTopkAndExpertGathersDoNotSplitPassesIntoLayers) {
  Loop loop;
  loop.moe = true;
  const Built b = build(loop);
  const auto s = steps_of(b.t.trace);
  ASSERT_EQ(s.steps.size(), b.forward_launch.size()) << s.method;  // 18, not 18 x 4 layers
  for (std::size_t i = 1; i < s.steps.size(); ++i) {
    if (i % 6 != 0) {
      EXPECT_EQ(s.steps[i].start_ns, b.forward_launch[i]) << i;
    }
  }
}

TEST(ForwardPasses, APauseInsideAPassIsThePasssOwn) {
  Loop loop;
  loop.cold_pause_ns = 30'000'000;  // e.g. a first call's lazy initialisation, before its sampling
  const Built b = build(loop);
  const auto s = steps_of(b.t.trace);
  ASSERT_EQ(s.steps.size(), b.forward_launch.size()) << s.method;
  EXPECT_EQ(s.steps[0].kernels, 1 + 1 + 4 * 2 + 1 + 1);  // the whole first pass, not its first kernels
  EXPECT_GT(s.steps[0].wall_ns, 30'000'000);
}

TEST(ForwardPasses, TheModelsOutermostModuleCallsAreThePasses) {
  // A torch.profiler trace with stacks: each forward inside "nn.Module: TinyForCausalLM_0", its
  // layers inside "nn.Module: TinyDecoderLayer_<l>"; no sampling kernel (a plain loop of forwards).
  SyntheticTrace t;
  TimeNs now = 1'000'000;
  std::uint32_t correlation = 1;
  std::vector<TimeNs> starts;
  for (int f = 0; f < 5; ++f) {
    const TimeNs begin = now;
    starts.push_back(begin);
    for (int l = 0; l < 4; ++l) {
      const TimeNs layer = now;
      for (int k = 0; k < 4; ++k) {
        t.api("cudaLaunchKernel", now + 1'000, now + 5'000, correlation);
        t.kernel(kGemm, now + 10'000, now + 30'000, correlation++);
        now += 30'000;
      }
      t.nvtx(59, "nn.Module: TinyDecoderLayer_" + std::to_string(l), layer, now, testing::global_tid(1), kKinetoPythonDomain);
    }
    now += 10'000;
    t.nvtx(59, "nn.Module: TinyForCausalLM_0", begin, now, testing::global_tid(1), kKinetoPythonDomain);
    now += 100'000;
  }
  const auto s = steps_of(t.trace);
  ASSERT_EQ(s.steps.size(), 5u) << s.method;  // not 20 layers
  EXPECT_NE(s.method.find("TinyForCausalLM_0"), std::string::npos) << s.method;
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s.steps[i].start_ns, starts[i]);
    EXPECT_EQ(s.steps[i].kernels, 16);
  }
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

// Steps that hold a sliver of the run's GPU work (a helper's decode_step annotation around one tiny
// kernel while the real work runs between them) describe nothing of its latency: TPOT is withheld
// and said; steps holding the work keep theirs. By construction: 1 us inside vs 1 ms between.
StepAnalysis annotated_loop(bool work_inside) {
  SyntheticTrace t;
  TimeNs now = 1'000'000;
  std::uint32_t correlation = 1;
  for (int step = 0; step < 6; ++step) {
    const TimeNs begin = now;
    t.api("cudaLaunchKernel", now, now + 5'000, correlation);
    t.kernel(kGemm, now + 10'000, now + 11'000, correlation++);
    now += 20'000;
    if (work_inside) {
      t.api("cudaLaunchKernel", now, now + 5'000, correlation);
      t.kernel(kGemm, now + 10'000, now + 1'010'000, correlation++);
      now += 1'020'000;
    }
    t.nvtx(59, "decode_step", begin, now);
    if (!work_inside) {
      t.api("cudaLaunchKernel", now, now + 5'000, correlation);
      t.kernel(kGemm, now + 10'000, now + 1'010'000, correlation++);
      now += 1'020'000;
    }
  }
  return steps_of(t.trace);
}

TEST(StepCoverage, StepsHoldingASliverOfTheWorkGiveNoTpot) {
  const auto thin = annotated_loop(false);
  ASSERT_EQ(thin.steps.size(), 6u);
  EXPECT_EQ(thin.tpot.count, 0) << thin.method;
  EXPECT_NE(thin.method.find("the steps hold 0.1 %"), std::string::npos) << thin.method;
  bool said = false;
  for (const auto& n : thin.notes) said |= n.text.find("TPOT and TTFT withheld") != std::string::npos;
  EXPECT_TRUE(said);
  const auto whole = annotated_loop(true);
  EXPECT_EQ(whole.tpot.count, 6) << whole.method;
  EXPECT_NE(whole.method.find("the steps hold 100.0 %"), std::string::npos) << whole.method;
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

// A transformer whose attention is plain matmul, softmax and matmul kernels (no attention kernel
// name) is still one where its attention modules are in the profiler's Python stacks; with the
// module calls renamed, the same kernels read as a small benchmark (by construction).
StepAnalysis toy_transformer(const std::string& attention_module) {
  SyntheticTrace t;
  TimeNs now = 1'000'000;
  std::uint32_t correlation = 1;
  const auto launch = [&](const char* name) {
    t.api("cudaLaunchKernel", now, now + 2'000, correlation);
    t.kernel(name, now + 5'000, now + 15'000, correlation++);
    now += 20'000;
  };
  for (int pass = 0; pass < 4; ++pass) {
    launch(kEmbedding);
    for (int layer = 0; layer < 2; ++layer) {
      const TimeNs begin = now;
      launch(kGemm);
      launch("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>");
      launch(kGemm);
      t.nvtx(59, "nn.Module: " + attention_module + "_" + std::to_string(layer), begin, now, testing::global_tid(1), kKinetoPythonDomain);
      launch(kGemm);
    }
    launch(kArgmax);
    now += 200'000;
  }
  return steps_of(t.trace);
}

TEST(Workload, ATransformerWithoutNamedAttentionKernelsIsStillOne) {
  const auto named = toy_transformer("ToySelfAttention");
  EXPECT_EQ(named.workload.kind, WorkloadKind::kLlmInference);
  EXPECT_EQ(named.steps.size(), 4u) << named.method;
  const auto unnamed = toy_transformer("ToyBlock");
  EXPECT_NE(unnamed.workload.kind, WorkloadKind::kLlmInference);
}

}  // namespace
}  // namespace kernscope
