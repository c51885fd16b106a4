// A step is one forward pass (analyses/steps/forward_passes.hpp). Synthetic traces of a
// Hugging Face generate() loop whose forwards are known by construction: each forward launches one
// token embedding lookup, its layers and one argmax; each generate() call launches a set-up kernel
// once (a cub scan, as generate()'s attention-mask cumsum does) and calls are 50 ms apart. The
// kernel period alone took each call for a step (the widest regular spacing is the set-up kernel's:
// issue 44's `kernscope record` of generate() gave 4 steps of ~5,559 kernels and TPOT 267 ms).
#include <gtest/gtest.h>

#include <string>

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
};

struct Built {
  SyntheticTrace t;
  std::vector<TimeNs> forward_launch;  // each forward's embedding launch
  std::vector<TimeNs> call_start;      // each call's first launch (its set-up kernel)
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
  for (int c = 0; c < loop.calls; ++c) {
    b.call_start.push_back(now);
    launch(kMaskScan);
    now += 200'000;  // generate()'s Python set-up
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
      b.t.api("cudaStreamSynchronize", now, now + 40'000, correlation++);
      now += 300'000;  // the loop's own Python between tokens
    }
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

TEST(ForwardPasses, RouterTopkAndExpertGathersDoNotSplitPassesIntoLayers) {
  Loop loop;
  loop.moe = true;
  const Built b = build(loop);
  const auto s = steps_of(b.t.trace);
  ASSERT_EQ(s.steps.size(), b.forward_launch.size()) << s.method;  // 18, not 18 x 4 layers
  for (std::size_t i = 1; i < s.steps.size(); ++i) {
    if (i % 6 != 0) EXPECT_EQ(s.steps[i].start_ns, b.forward_launch[i]) << i;
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
  for (const auto& n : thin.notes) said |= n.find("TPOT and TTFT withheld") != std::string::npos;
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
