// A step's new tokens from its KV-cache writes (analyses/steps/step_phases.hpp, rule 3): vLLM's
// reshape_and_cache kernels launch one block per token (`dim3 grid(num_tokens)`, csrc/cache_kernels.cu),
// so their grid is the step's tokens, and the tokens decide the phase where nothing names it. The
// case of issue 44's held-out vLLM V1 trace, built by hand: steps found by execute_model, a 1,049-token
// prefill then nine batch-1 decodes, every step's kernels GEMM tiles and a generic attention kernel
// (the kernel mix read all ten as prefills).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernscope/op_classes.hpp"
#include "kernscope/steps.hpp"
#include "model/token_grids.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

using testing::SyntheticTrace;

constexpr const char* kTokensGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1";
constexpr const char* kTokensAttention = "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false>";
constexpr const char* kCacheWrite = "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>";

StepAnalysis steps_with_cache_writes(const std::vector<int>& tokens, const char* cache_kernel = kCacheWrite,
                                     const char* attention = kTokensAttention) {
  SyntheticTrace t;
  TimeNs now = 1'000'000;
  std::uint32_t correlation = 1;
  const auto launch = [&](const char* name, int grid) {
    t.api("cudaLaunchKernel", now, now + 5'000, correlation);
    t.kernel(name, now + 10'000, now + 110'000, correlation++);
    t.trace.kernels.grid_x.back() = grid;
    now += 120'000;
  };
  for (int n : tokens) {
    const TimeNs begin = now;
    for (int layer = 0; layer < 2; ++layer) {
      launch(kTokensGemm, 64);
      launch(cache_kernel, n);
      launch(attention, 16);
      launch(kTokensGemm, 64);
    }
    t.nvtx(59, "execute_model", begin, now);
    now += 500'000;
  }
  token_grids_from_grids(t.trace.kernels, t.trace.strings);  // as the readers do
  return analyze_steps(t.trace, OpRuleSet::builtin(), {}).value();
}

std::vector<Phase> phases(const StepAnalysis& s) {
  std::vector<Phase> out;
  for (const auto& st : s.steps) out.push_back(st.phase);
  return out;
}

TEST(StepTokens, ACacheWriteGridIsTheStepsTokensAndDecidesItsPhase) {
  const std::vector<int> tokens = {1049, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const auto s = steps_with_cache_writes(tokens);
  ASSERT_EQ(s.steps.size(), tokens.size()) << s.method;
  std::vector<Phase> want(tokens.size(), Phase::kDecode);
  want[0] = Phase::kPrefill;
  EXPECT_EQ(phases(s), want) << s.method;
  for (std::size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(s.steps[i].tokens, tokens[i]) << i;
  EXPECT_NE(s.method.find("10 from tokens (KV-cache write grids): 1 to 1049 tokens a step"), std::string::npos) << s.method;
  EXPECT_EQ(s.ttft.count, 1);
  EXPECT_EQ(s.tpot.count, 9);
}

// A batch of 16 sequences decodes 15-16 tokens a step (one each); a prefill of 2,048 beside them.
TEST(StepTokens, ADecodeBatchIsOneTokenPerSequence) {
  const auto s = steps_with_cache_writes({2048, 16, 16, 15, 16, 14});
  const std::vector<Phase> want = {Phase::kPrefill, Phase::kDecode, Phase::kDecode, Phase::kDecode, Phase::kDecode, Phase::kDecode};
  EXPECT_EQ(phases(s), want) << s.method;
}

// Attention kernels that say decode decide first: a batch of 32 sequences decoding writes 32 tokens a
// step, 32x the last lone sequence's 1, and is no prefill (a paged-attention decode kernel in each).
TEST(StepTokens, DecodeAttentionKernelsOutrankTheTokenCount) {
  const auto s = steps_with_cache_writes({32, 32, 32, 1}, kCacheWrite, "void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128>");
  EXPECT_EQ(phases(s), std::vector<Phase>(4, Phase::kDecode)) << s.method;
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(s.steps[i].tokens, i < 3 ? 32 : 1);  // the tokens still shown
}

// The same tokens in every step (64 each), or counts within 8x of each other, tell nothing: the phase comes from the next evidence, and
// a kernel whose grid is not one block per token gives no tokens at all.
TEST(StepTokens, EvenTokensOrAnotherKernelDecideNothing) {
  const auto even = steps_with_cache_writes({64, 64, 64, 64});
  EXPECT_EQ(even.method.find("KV-cache write grids"), std::string::npos) << even.method;
  for (const auto& st : even.steps) EXPECT_EQ(st.tokens, 64);
  // Prefills of different lengths (64 to 200 tokens, about 3x apart, under the rule's 8x) are not
  // told apart as prefill and decode by their tokens either.
  const auto uneven = steps_with_cache_writes({64, 200, 150, 64});
  EXPECT_EQ(uneven.method.find("KV-cache write grids"), std::string::npos) << uneven.method;
  const auto other = steps_with_cache_writes({1049, 1, 1, 1}, "void flashinfer::AppendPagedKVCacheKernel<128, 8, __nv_bfloat16, int>");
  for (const auto& st : other.steps) EXPECT_EQ(st.tokens, -1);
  EXPECT_EQ(other.method.find("KV-cache write grids"), std::string::npos) << other.method;
}

}  // namespace
}  // namespace kernscope
