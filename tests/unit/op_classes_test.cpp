// Operation classes. Expected classes come from what each kernel is by its name and its library's
// naming convention, never from kernscope's output. In the llama fixture (PyTorch eager Llama,
// batch 1) the nvjet kernels with an 8-wide first tile are the batch-1 projections and
// lean_reduction_kernel pairs 1:1 with the decode attention kernel (cuDNN's split-K "lean attention"
// combine). The eager RMSNorm and RoPE there are built from ATen primitives (pow, mean, rsqrt; neg,
// sin, cos) whose names say only the primitive, so those kernels are elementwise and reduction: a
// class from a name has to hold on every trace that name appears in (a ResNet's mean or neg is no
// norm or RoPE).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

TEST(OpRules, BuiltinParses) { EXPECT_EQ(OpRuleSet::builtin().size(), 33u); }  // rule lines in data/op_rules.tsv

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

TEST(OpRules, LibraryNamingConventions) {
  // Names as the libraries spell them (their sources or public profiles), for conventions the
  // fixtures' traces do not show.
  const std::map<std::string, std::string> cases = {
      // MoE GEMMs that fuse the activation stay MoE GEMMs: triton_kernels (gpt-oss), trtllm-gen.
      {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x256x128x1_swiglu", "moe_gemm"},
      {"bmm_E2m1_E2m1E2m1_Fp32_t128x64x256_s6_et128x64_m128x64x64_cga1x1x1_16dp256b_TN_transOut_schedS_bN_ldgsts_"
       "tmaOpt_clmp_swiGlu_dynBatch_sm100a",
       "moe_gemm"},
      // DeepSeek's dpsk::grouped_gemm:: namespace holds dense FP8 GEMMs beside its MoE ones (m_grouped_):
      // the namespace alone does not make an expert GEMM (as data/moe_roles.tsv's expert_gemm).
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>(...)", "moe_gemm"},
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(...)", "gemm"},
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>(...)", "gemm"},
      {"void deep_gemm::fp8_gemm_kernel<k_grouped_gemm_contiguous>(...)", "moe_gemm"},
      // sampling is top-k/top-p/argmax/multinomial only; softmax, sorts and random numbers are not.
      {"void (anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, Epilogue>(...)", "softmax"},
      {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800>(...)",
       "reduction"},
      {"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
       "at::native::templates::cuda::uniform_and_transform<float, float>>(...)",
       "elementwise"},
      {"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(...)", "sampling"},
      // ROCm: hipBLASLt/rocBLAS Tensile, CK and ck_tile by what they name, aiter, vLLM ROCm, MIOpen, RCCL.
      {"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3", "gemm"},
      {"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<...>>(...)", "gemm"},
      {"void ck::kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle<...>(...)", "convolution"},
      {"void ck::kernel_batched_gemm_softmax_gemm_xdl_cshuffle_v1<...>(...)", "attention"},
      {"void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<...>>>(...)",
       "attention"},
      {"void ck_tile::kentry<256, 1, ck_tile::FmhaFwdSplitKVCombineKernel<...>>(...)", "splitkv_reduce"},
      {"void ck_tile::kentry<256, 1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<...>>>(...)", "norm"},
      {"void ck_tile::kentry<256, 1, ck_tile::MoeSortingKernel<...>>(...)", "moe_routing"},
      {"void ck_tile::kentry<256, 1, ck_tile::FusedMoeGemmKernel<...>>(...)", "moe_gemm"},
      {"void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, 16, 128>(...)",
       "attention_decode"},
      {"void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 1>(...)",
       "splitkv_reduce"},
      {"void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>(...)", "gemv"},
      {"MIOpenBatchNormFwdTrainSpatial", "norm"},
      {"mloPoolingG", "pooling"},
      {"naive_conv_fwd_nchw_fp32", "convolution"},
      {"igemm_wrw_gtc_gfx908_nhwc", "convolution"},
      {"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "communication"},
      {"__amd_rocclr_copyBuffer", "copy_cast"},
      // Training: optimizers, gradients of unnamed operations, norms' backward.
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>(...)",
       "optimizer"},
      {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, long>(...)",
       "reduction"},
      {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(...)", "norm"},
      // Inductor names a fused epilogue after the collective or convolution beside it: elementwise.
      {"triton_poi_fused_all_reduce_0", "elementwise"},
      {"triton_poi_fused_convolution_relu_0", "elementwise"},
      {"void at::native::(anonymous namespace)::small_reduce_kernel<float>(...)", "reduction"},  // not all_reduce
  };
  for (const auto& [name, want] : cases) EXPECT_EQ(OpRuleSet::builtin().classify(name).first, want) << name;
}

// Every distinct kernel name of the traces in ../shared/fixtures/realworld (and a selection from
// tests/fixtures/kineto), with the class a person gives it by reading it: see the file's header.
TEST(OpRules, RealTraceKernelNames) {
  const std::string text = testing::read_file(testing::fixtures_dir() / "op_classes/kernel_names.tsv");
  const auto& known = operation_classes();
  std::istringstream in(text);
  std::string line;
  std::size_t rows = 0;
  std::map<std::string, std::size_t> rows_per_source;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab1 = line.find('\t');
    const auto tab2 = tab1 == std::string::npos ? std::string::npos : line.find('\t', tab1 + 1);
    ASSERT_NE(tab2, std::string::npos) << "expected NAME<TAB>CLASS<TAB>SOURCE: " << line;
    const std::string name = line.substr(0, tab1);
    const std::string want = line.substr(tab1 + 1, tab2 - tab1 - 1);
    const std::string source = line.substr(tab2 + 1);
    EXPECT_NE(std::find(known.begin(), known.end(), want), known.end()) << "no class '" << want << "'";
    EXPECT_EQ(OpRuleSet::builtin().classify(name).first, want) << name << "\n  from " << source;
    ++rows;
    ++rows_per_source[source];
  }
  EXPECT_EQ(rows, 342u);  // the file's rows: a truncated file fails here
  EXPECT_EQ(rows_per_source.size(), 15u);  // 10 real-world traces (DeepSeek's DeepEP kernels: 6) + demangled names of one + 4 from tests/fixtures/kineto
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
  auto generic = parse_nccl_kernel("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)").value();
  EXPECT_EQ(generic.operation, "Generic");  // the operation is in the arguments: nothing else to tell
  EXPECT_EQ(generic.dtype, "");             // "1" is a variant number, not a type
  EXPECT_FALSE(parse_nccl_kernel("gemm_kernel"));
}

TEST(OpsOnLlamaFixture, EveryKernelRightAndOtherUnderFivePercent) {
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  auto ops = classify_operations(*trace, OpRuleSet::builtin()).value();
  // Substring of the kernel name -> its operation (see the file comment for how each was established).
  const std::vector<std::pair<std::string, std::string>> identity = {
      {"nvjet_sm90_tst_64x8_", "gemv"}, {"nvjet_sm90_tst_8x64_", "gemv"}, {"nvjet_sm90_tst_256x8_", "gemv"},
      {"nvjet_sm90_tst_128x64_", "gemm"}, {"nvjet_sm90_tst_176x128_", "gemm"}, {"nvjet_sm90_tst_64x48_", "gemm"},
      {"nvjet_sm90_tst_256x128_", "gemm"}, {"cutlass_80_simt_sgemm", "gemm"}, {"splitKreduce_kernel", "gemm"},
      {"sdpa_sm80_flash_fprop", "attention_decode"}, {"sdpa_sm90_flash_fprop", "attention_prefill"},
      {"lean_reduction_kernel", "splitkv_reduce"}, {"MeanOps<float", "reduction"},
      {"rsqrt_kernel_cuda", "elementwise"}, {"pow_tensor_scalar", "elementwise"}, {"neg_kernel_cuda", "elementwise"},
      {"sin_kernel_cuda", "elementwise"}, {"cos_kernel_cuda", "elementwise"}, {"silu_kernel", "activation"},
      {"ArgMaxOps", "sampling"}, {"random_from_to", "elementwise"},  // the prompt's random token ids
      {"indexSelectSmallIndex", "embedding"},
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
  // 40 kernel names in the trace; the prompt's random token ids (random_from_to, 1 kernel) were
  // drawn before the first step (sqlite3: its cudaLaunchKernel starts before warmup:prefill), so
  // they are setup, left out of the classes with the 149 weight copies (1,705,119,872 bytes).
  EXPECT_EQ(ops.kernels.size(), 39u);
  EXPECT_EQ(ops.setup_kernels, 1);
  EXPECT_NE(ops.setup_note.find("149 copies (1.705 GB"), std::string::npos) << ops.setup_note;
  EXPECT_LT(ops.other_share, 0.05);
  std::int64_t instances = 0;
  for (const auto& c : ops.classes) {
    instances += c.op_class == "memcpy" || c.op_class == "memset" ? 0 : c.instances;
    EXPECT_NE(c.op_class, "memcpy");  // every copy of this trace loads the model before the first step
  }
  EXPECT_EQ(instances + ops.setup_kernels, 90287);  // every kernel counted once
}

// Instances per class of three flash-attention kernels, the k-th launched at 200k + 10 inside the
// k-th of `ranges` (a push/pop range over [200k, 200k + 100]), or outside any range where there are
// fewer than three.
std::map<std::string, std::int64_t> attention_classes(const std::vector<std::string>& ranges) {
  testing::SyntheticTrace s;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    const TimeNs at = 200 * static_cast<TimeNs>(r);
    s.nvtx(kNvtxPushPopRange, ranges[r], at, at + 100);
  }
  for (std::uint32_t c = 1; c <= 3; ++c) {
    const TimeNs at = 200 * static_cast<TimeNs>(c - 1);
    s.api("cudaLaunchKernel", at + 10, at + 20, c);
    s.kernel("flash_fwd_kernel", at + 30, at + 40, c);
  }
  auto ops = classify_operations(s.trace, OpRuleSet::builtin()).value();
  std::map<std::string, std::int64_t> by_class;
  for (const auto& c : ops.classes) by_class[c.op_class] = c.instances;
  return by_class;
}

TEST(OpsPhases, AttentionResolvedByNvtxOrLeftGeneric) {
  auto by_class = attention_classes({"model:prefill", "decode_step"});
  EXPECT_EQ(by_class["attention_prefill"], 1);
  EXPECT_EQ(by_class["attention_decode"], 1);
  EXPECT_EQ(by_class["attention"], 1);  // launched outside any phase range
}

// A range whose name merely contains "decode" or "prefill" (a video decoder's op, aiter's
// mha_batch_prefill operator) says nothing of the step's phase; SGLang's forward span does.
TEST(OpsPhases, OnlyStepAnnotationsStateThePhase) {
  // (The step comes first: work launched before the first step would be setup, left out.)
  auto by_class = attention_classes({"step[DECODE bs=8]", "decode_frame", "aiter::mha_batch_prefill"});
  EXPECT_EQ(by_class["attention"], 2);
  EXPECT_EQ(by_class["attention_decode"], 1);
  EXPECT_EQ(by_class["attention_prefill"], 0);
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
