// Where steps come from (analyses/step_windows.hpp). Annotation names: what engines and PyTorch
// call their steps, against names that only contain such a word (from the public traces in the
// issue: nvFuser's resolveForwardedInputs, FSDP's pre_forward/post_forward, flash-attn's forward
// call). Without annotations: the llama fixture's NVTX ranges are the truth (2 prefill and 128
// decode steps as its workload issued them; nvtx_pushpop_sum gold counts them), and the same
// trace read without its NVTX rows must give the same steps from the period of its kernels.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyses/step_windows.hpp"
#include "kernscope/open.hpp"
#include "kernscope/steps.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

using report::step_annotation;

TEST(StepAnnotations, StepNamesAreWholeWords) {
  struct Case {
    const char* text;
    bool step;
    Phase phase;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"decode_step", true, Phase::kDecode},
           {"measure:decode_step", true, Phase::kDecode},
           {"prefill", true, Phase::kPrefill},
           {"ProfilerStep#12", true, Phase::kUnknown},
           {"step 7", true, Phase::kUnknown},
           {"forward", true, Phase::kUnknown},
           {"execute_model", true, Phase::kUnknown},
           {"execute_512_context_1(512)_generation_0(0)", true, Phase::kPrefill},
           {"execute_4_context_0(0)_generation_4(4)", true, Phase::kDecode},
           {"execute_260_context_1(256)_generation_4(4)", true, Phase::kMixed},
           {"_forward_step 12: 0 ctx reqs, 8 gen reqs", true, Phase::kDecode},
           {"_forward_step 3: 1 ctx reqs, 7 gen reqs", true, Phase::kMixed},
           {"resolveForwardedInputs", false, Phase::kUnknown},
           {"FullyShardedDataParallel.pre_forward", false, Phase::kUnknown},
           {"post_forward", false, Phase::kUnknown},
           {"_flash_attn_forward", false, Phase::kUnknown},
           {"aten::linear", false, Phase::kUnknown},
           {"stepwise_reduce", false, Phase::kUnknown},
       }) {
    const auto a = step_annotation(c.text);
    EXPECT_EQ(a.has_value(), c.step) << c.text;
    if (a) EXPECT_EQ(a->phase, c.phase) << c.text;
  }
}

std::vector<std::int64_t> kernels_per_step(const StepAnalysis& s, Phase phase) {
  std::vector<std::int64_t> out;
  for (const auto& st : s.steps) {
    if (st.phase == phase) out.push_back(st.kernels);
  }
  return out;
}

TEST(StepSources, WithoutNvtxTheKernelPeriodGivesTheAnnotatedSteps) {
  const std::string path = (testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.gz").string();
  auto annotated_trace = open_trace(path);
  ASSERT_TRUE(annotated_trace);
  OpenOptions no_nvtx;
  no_nvtx.kinds = kAllEventKinds & ~bit(EventKind::kNvtx);
  auto bare_trace = open_trace(path, no_nvtx);
  ASSERT_TRUE(bare_trace);
  ASSERT_EQ(bare_trace->nvtx.size(), 0u);
  const auto annotated = analyze_steps(*annotated_trace, OpRuleSet::builtin(), {}).value();
  const auto bare = analyze_steps(*bare_trace, OpRuleSet::builtin(), {}).value();
  EXPECT_NE(bare.method.find("period"), std::string::npos) << bare.method;
  for (Phase phase : {Phase::kPrefill, Phase::kDecode}) {
    auto want = kernels_per_step(annotated, phase);
    auto got = kernels_per_step(bare, phase);
    ASSERT_EQ(got.size(), want.size()) << phase_name(phase);
    ASSERT_EQ(want.size(), phase == Phase::kPrefill ? 2u : 128u);
    // A period step starts at the anchor's launch, which need not be the pass's first: the few
    // kernels a pass launches before its anchor count in the step before it. Counts per step are
    // then the same, but for the very last step, which has no next step to give it its own.
    ASSERT_FALSE(want.empty());
    const std::size_t last = want.size() - 1;
    for (std::size_t i = 0; i < last; ++i) EXPECT_EQ(got[i], want[i]) << phase_name(phase) << " step " << i;
    EXPECT_LE(want[last] - got[last], 16) << phase_name(phase);
    EXPECT_GE(want[last] - got[last], 0) << phase_name(phase);
  }
  EXPECT_EQ(bare.workload.kind, WorkloadKind::kLlmInference);
}

}  // namespace
}  // namespace kernscope
