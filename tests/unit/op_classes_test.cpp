// Operation classes. Expected classes were established from what each kernel is, not from
// kernscope's output: in the llama fixture (PyTorch eager Llama, batch 1) e.g. neg_kernel runs
// 4160 = 2 x 16 layers x 130 forwards times (RoPE's rotate_half on q and k), the float MeanOps
// reduce / pow / rsqrt run 4290 = 2 x 16 + 1 per forward (RMSNorm), lean_reduction_kernel pairs 1:1
// with the decode attention kernel (cuDNN's split-K "lean attention" combine), the nvjet kernels
// with an 8-wide first tile are the batch-1 projections.
#include <gtest/gtest.h>

#include <map>

#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

TEST(OpRules, BuiltinParses) { EXPECT_EQ(OpRuleSet::builtin().size(), 22u); }  // rule lines in data/op_rules.tsv

TEST(OpRules, KnownEngineKernelNames) {
  // Names from public engines and libraries (../shared/reference/kernel-names.md).
  const std::map<std::string, std::string> cases = {
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication"},
      {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)", "communication"},
      {"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>(Flash_fwd_params)", "attention_decode"},
      {"void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>(Flash_fwd_params)", "splitkv_reduce"},
      {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<...>(...)", "attention_decode"},
      {"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<...>(...)", "attention_prefill"},
      {"void vllm::paged_attention_v2_kernel<__nv_bfloat16, 128>(...)", "attention_decode"},
      {"void vllm::paged_attention_v2_reduce_kernel<__nv_bfloat16, 128>(...)", "splitkv_reduce"},
      {"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>(...)", "kv_cache_write"},
      {"void cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>(...)", "attention"},
      {"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(...)", "norm"},
      {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(...)", "rope"},
      {"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel>(...)", "activation"},
      {"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<...>(...)", "sampling"},
      {"fused_moe_kernel", "moe_gemm"},
      {"void vllm::moe::moe_align_block_size_kernel<int>(...)", "moe_routing"},
      {"void vllm::scaled_fp8_quant_kernel<c10::BFloat16>(...)", "quantization"},
      {"void marlin::Marlin<...>(...)", "quantized_gemm"},
      {"void gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, float, false, true>(...)", "gemv"},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "gemm"},
      {"triton_poi_fused_add_mul_0", "elementwise"},
      {"triton_red_fused__to_copy_add_mean_pow_rsqrt_1", "norm"},
      {"triton_per_fused_sum_2", "reduction"},
      {"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT", "gemm"},  // first tile 128x64: not skinny
      {"nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "gemv"},
      {"some_custom_kernel_nobody_knows", "other"},
  };
  for (const auto& [name, want] : cases) EXPECT_EQ(OpRuleSet::builtin().classify(name).first, want) << name;
}

TEST(OpRules, UserRulesComeFirstAndBadFilesAreRejected) {
  auto user = OpRuleSet::parse("# mine\nnorm\tsome_custom_kernel\n", "mine.tsv");
  ASSERT_TRUE(user) << user.error().message;
  const auto combined = OpRuleSet::combine(*user, OpRuleSet::builtin());
  EXPECT_EQ(combined.classify("some_custom_kernel_nobody_knows").first, "norm");
  EXPECT_EQ(combined.classify("some_custom_kernel_nobody_knows").second->origin, "mine.tsv:2");
  for (const char* bad : {"gemm no tab here\n", "nonsense\tfoo\n", "gemm\t(unclosed\n", "memcpy\tx\n", "gemm\t\n"}) {
    auto r = OpRuleSet::parse(bad, "bad.tsv");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("bad.tsv:1"), std::string::npos) << r.error().message;
  }
}

TEST(Nccl, ParsesOperationDtypeAlgorithmProtocol) {
  auto k = parse_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)").value();
  EXPECT_EQ(k.operation, "AllReduce");
  EXPECT_EQ(k.reduction, "Sum");
  EXPECT_EQ(k.dtype, "f32");
  EXPECT_EQ(k.algorithm, "RING");
  EXPECT_EQ(k.protocol, "LL");
  auto nvls = parse_nccl_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_NVLS_TREE_SIMPLE").value();
  EXPECT_EQ(nvls.algorithm, "NVLS_TREE");
  EXPECT_EQ(nvls.protocol, "SIMPLE");
  auto old = parse_nccl_kernel("ncclKernel_AllGather_RING_LL128_Sum_int8_t").value();
  EXPECT_EQ(old.operation, "AllGather");
  EXPECT_EQ(old.dtype, "int8");
  EXPECT_EQ(old.protocol, "LL128");
  EXPECT_FALSE(parse_nccl_kernel("gemm_kernel"));
}

TEST(OpsOnLlamaFixture, EveryKernelRightAndOtherUnderFivePercent) {
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.gz").string());
  ASSERT_TRUE(trace);
  auto ops = classify_operations(*trace, OpRuleSet::builtin()).value();
  // Substring of the kernel name -> its operation (see the file comment for how each was established).
  const std::vector<std::pair<std::string, std::string>> identity = {
      {"nvjet_sm90_tst_64x8_", "gemv"}, {"nvjet_sm90_tst_8x64_", "gemv"}, {"nvjet_sm90_tst_256x8_", "gemv"},
      {"nvjet_sm90_tst_128x64_", "gemm"}, {"nvjet_sm90_tst_176x128_", "gemm"}, {"nvjet_sm90_tst_64x48_", "gemm"},
      {"nvjet_sm90_tst_256x128_", "gemm"}, {"cutlass_80_simt_sgemm", "gemm"}, {"splitKreduce_kernel", "gemm"},
      {"sdpa_sm80_flash_fprop", "attention_decode"}, {"sdpa_sm90_flash_fprop", "attention_prefill"},
      {"lean_reduction_kernel", "splitkv_reduce"}, {"MeanOps<float", "norm"}, {"rsqrt_kernel_cuda", "norm"},
      {"pow_tensor_scalar", "norm"}, {"neg_kernel_cuda", "rope"}, {"sin_kernel_cuda", "rope"},
      {"cos_kernel_cuda", "rope"}, {"silu_kernel", "activation"}, {"ArgMaxOps", "sampling"},
      {"distribution_elementwise", "sampling"}, {"indexSelectSmallIndex", "embedding"},
      {"vectorized_gather_kernel", "embedding"}, {"CatArrayBatchedCopy", "copy_cast"},
      {"direct_copy_kernel", "copy_cast"}, {"bfloat16_copy_kernel", "copy_cast"}, {"MulFunctor", "elementwise"},
      {"CUDAFunctor_add", "elementwise"}, {"CUDAFunctorOnSelf_add", "elementwise"}, {"arange_cuda_out", "elementwise"}};
  std::size_t checked = 0;
  for (const auto& k : ops.kernels) {
    bool known = false;
    for (const auto& [needle, want] : identity) {
      if (k.name.find(needle) == std::string::npos) continue;
      EXPECT_EQ(k.op_class, want) << k.name;
      known = true;
      break;
    }
    EXPECT_TRUE(known) << "no expected class for " << k.name;
    checked += known;
  }
  EXPECT_EQ(checked, ops.kernels.size());
  EXPECT_EQ(ops.kernels.size(), 40u);
  EXPECT_LT(ops.other_share, 0.05);
  std::int64_t instances = 0;
  for (const auto& c : ops.classes) instances += c.op_class == "memcpy" || c.op_class == "memset" ? 0 : c.instances;
  EXPECT_EQ(instances, 90287);  // every kernel counted once
}

TEST(OpsPhases, AttentionResolvedByNvtxOrLeftGeneric) {
  testing::SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "model:prefill", 0, 100);
  s.nvtx(kNvtxPushPopRange, "decode_step", 200, 300);
  s.api("cudaLaunchKernel", 10, 20, 1);
  s.api("cudaLaunchKernel", 210, 220, 2);
  s.api("cudaLaunchKernel", 400, 410, 3);
  s.kernel("flash_fwd_kernel", 30, 40, 1);
  s.kernel("flash_fwd_kernel", 230, 240, 2);
  s.kernel("flash_fwd_kernel", 430, 440, 3);
  auto ops = classify_operations(s.trace, OpRuleSet::builtin()).value();
  std::map<std::string, std::int64_t> by_class;
  for (const auto& c : ops.classes) by_class[c.op_class] = c.instances;
  EXPECT_EQ(by_class["attention_prefill"], 1);
  EXPECT_EQ(by_class["attention_decode"], 1);
  EXPECT_EQ(by_class["attention"], 1);  // launched outside any phase range
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

TEST(OpsNames, UnnamedKernelsStayApartFromNamedOnes) {
  testing::SyntheticTrace s;
  s.kernel("x", 400, 410);
  s.trace.kernels.demangled_name.back() = kNoString;  // a kernel whose name the export lacks
  s.kernel("gemvx::kernel", 0, 100);
  s.kernel("flash_fwd_kernel", 200, 300);  // the last string interned: the slot an unnamed kernel must not share
  auto ops = classify_operations(s.trace, OpRuleSet::builtin()).value();
  std::int64_t instances = 0;
  for (const auto& c : ops.classes) instances += c.instances;
  EXPECT_EQ(instances, 3);
  ASSERT_EQ(ops.kernels.size(), 3u);
  std::map<std::string, std::string> class_of;
  for (const auto& k : ops.kernels) class_of[k.name] = k.op_class;
  EXPECT_EQ(class_of["flash_fwd_kernel"], "attention");
  EXPECT_EQ(class_of[""], "other");
}

}  // namespace
}  // namespace kernscope
