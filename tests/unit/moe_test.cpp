// Mixture-of-experts layers (issue 31) on traces built in memory, whose answers hold by construction:
// the role table, layers counted from router invocations, and the dispatch/combine time no compute
// kernel hides, worked out by hand below.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "analyses/moe/eager_experts.hpp"
#include "analyses/moe/moe.hpp"
#include "render/moe_render.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

// One vocabulary: the operation class moe_gemm (ops, account, whatif's scale=moe_gemm) and moe's
// expert_gemm role come from two tables (data/op_rules.tsv, data/moe_roles.tsv); on every kernel name
// of tests/fixtures/op_classes (real traces) and the engines' spellings here they name the same kernels.
TEST(MoeRoles, ExpertGemmsAreTheOpClassMoeGemm) {
  std::vector<std::string> names = {
      "fused_moe_kernel", "void deep_gemm::fp8_gemm_kernel<m_grouped_gemm_masked>",
      "void deep_gemm::fp8_gemm_kernel<k_grouped_gemm_contiguous>", "_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu",
      "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>(...)",
      "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(...)",
      "void vllm::moe::topkGatingSoftmax<8, 128>(float const*)", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"};
  std::istringstream in(testing::read_file(testing::fixtures_dir() / "op_classes/kernel_names.tsv"));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') names.push_back(line.substr(0, line.find('\t')));
  }
  std::size_t expert = 0;
  for (const auto& name : names) {
    const bool by_role = MoeRoleRules::builtin().role_of(name) == MoeRole::kExpertGemm;
    EXPECT_EQ(OpRuleSet::builtin().classify(name).first == "moe_gemm", by_role) << name;
    expert += by_role;
  }
  EXPECT_GE(expert, 5u);  // the list above holds five
}

TEST(MoeRoles, BuiltinTableNamesTheRolesOfEnginesKernels) {
  const auto& roles = MoeRoleRules::builtin();
  auto role = [&](const char* name) { return roles.role_of(name); };
  EXPECT_EQ(role("fused_moe_kernel"), MoeRole::kExpertGemm);  // vLLM/SGLang Triton
  EXPECT_EQ(role("void deep_gemm::fp8_gemm_kernel<m_grouped_gemm_masked>"), MoeRole::kExpertGemm);
  EXPECT_EQ(role("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu"), MoeRole::kExpertGemm);
  EXPECT_EQ(role("void vllm::moe::topkGatingSoftmax<8, 128>(float const*)"), MoeRole::kRouter);
  EXPECT_EQ(role("void vllm::moe::moe_align_block_size_kernel<int>(int*)"), MoeRole::kPermute);
  EXPECT_EQ(role("void deep_ep::intranode::dispatch<8, 768>(int*)"), MoeRole::kDispatchCombine);
  EXPECT_EQ(role("void dpsk::ep::internode::combine<true>(void*)"), MoeRole::kDispatchCombine);
  // Not MoE by name alone: a dense GEMM in a grouped_gemm namespace, NCCL, sampling's top-k.
  EXPECT_FALSE(role("void dpsk::grouped_gemm::cuda::fp8_ptp128c_kernel(float*)").has_value());
  EXPECT_FALSE(role("ncclDevKernel_AllReduce_Sum_bf16_RING_LL").has_value());
  EXPECT_FALSE(role("void at::native::sbtopk::gatherTopK<float>(float*)").has_value());
  EXPECT_FALSE(MoeRoleRules::parse("router\t(", "x").has_value());
  EXPECT_FALSE(MoeRoleRules::parse("experts\tfoo", "x").has_value());
}

TEST(Moe, LayersFromRouterInvocationsAndExposedDispatchCombine) {
  testing::SyntheticTrace s;
  // Two steps of two MoE layers each: router, dispatch, expert GEMM, combine; an attention kernel
  // overlaps part of each dispatch (ns, by hand):
  //   layer: router [t, t+10)  dispatch [t+10, t+110)  gemm [t+110, t+310)  combine [t+310, t+360)
  //   attention [t+60, t+90) on another stream: hides 30 of the dispatch's 100 ns.
  //   an NCCL all-reduce [t+320, t+340) on a third stream beside the combine: communication, so it
  //   hides none of it (as compute it would hide 20 ns).
  for (int step = 0; step < 2; ++step) {
    for (int layer = 0; layer < 2; ++layer) {
      const TimeNs t = 10'000 * step + 1'000 * layer;
      s.kernel("moeTopK<float>", t, t + 10);
      s.kernel("deep_ep::internode::dispatch<8>", t + 10, t + 110);
      s.kernel("attention_fwd_kernel", t + 60, t + 90, 0, testing::global_pid(), 8);
      s.kernel("fused_moe_kernel", t + 110, t + 310);
      s.kernel("deep_ep::internode::combine<8>", t + 310, t + 360);
      s.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", t + 320, t + 340, 0, testing::global_pid(), 9);
    }
  }
  StepAnalysis steps;
  steps.kernel_step.assign(s.trace.kernels.size(), -1);
  for (std::size_t i = 0; i < steps.kernel_step.size(); ++i) steps.kernel_step[i] = i < 12 ? 0 : 1;
  auto moe = analyze_moe(s.trace, OpRuleSet::builtin(), steps, moe::eager_experts(s.trace));
  ASSERT_TRUE(moe.has_value());
  ASSERT_TRUE(moe->present);
  ASSERT_EQ(moe->layers.size(), 2u);
  for (const auto& l : moe->layers) {
    EXPECT_EQ(l.invocations, 2);  // each layer ran in both steps
    EXPECT_EQ(l.ns[static_cast<int>(MoeRole::kExpertGemm)], 2 * 200);
    EXPECT_EQ(l.ns[static_cast<int>(MoeRole::kRouter)], 2 * 10);
    EXPECT_EQ(l.ns[static_cast<int>(MoeRole::kDispatchCombine)], 2 * 150);
    EXPECT_TRUE(l.experts.empty());
  }
  EXPECT_EQ(moe->dispatch_combine_ns, 4 * 150);
  EXPECT_EQ(moe->dispatch_combine_exposed_ns, 4 * 120);  // 30 ns of each dispatch hidden, none of each combine
  EXPECT_FALSE(moe->perfect_router.estimated);
  // A router GEMM and its gate kernel with no expert work between them are one router: one layer.
  testing::SyntheticTrace two;
  for (int layer = 0; layer < 3; ++layer) {
    const TimeNs t = 1'000 * layer;
    two.kernel("void vllm::dsv3_router_gemm_kernel<16>(float*)", t, t + 5);
    two.kernel("void sglang::moe_fused_gate_kernel<8>(float*)", t + 5, t + 8);
    two.kernel("fused_moe_kernel", t + 10, t + 100);
  }
  StepAnalysis one_pass;
  auto merged = analyze_moe(two.trace, OpRuleSet::builtin(), one_pass, moe::eager_experts(two.trace));
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->layers.size(), 3u);
  for (const auto& l : merged->layers) EXPECT_EQ(l.ns[static_cast<int>(MoeRole::kRouter)], 8);
  // A trace of all-to-alls alone (sequence parallelism) holds no MoE layers.
  testing::SyntheticTrace a2a;
  a2a.kernel("ncclDevKernel_AllToAll_RING_LL", 0, 100);
  a2a.kernel("all_to_all_single_kernel", 100, 200);
  StepAnalysis none;
  auto plain = analyze_moe(a2a.trace, OpRuleSet::builtin(), none, moe::eager_experts(a2a.trace));
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->present);
  EXPECT_NE(plain->evidence.find("do not make MoE layers"), std::string::npos);
}

// Steps of different numbers of MoE layers (two routers in step 0, one in step 1): layer 1 ran once
// where layer 0 ran twice, so a layer number is a router's position, not the model's layer. Said as
// a note of its kind, which the JSON writes with the sentence.
TEST(Moe, StepsOfDifferentLayerCountsAreNotedByKind) {
  testing::SyntheticTrace s;
  StepAnalysis steps;
  for (const auto& [step, layers] : {std::pair{0, 2}, std::pair{1, 1}}) {
    for (int layer = 0; layer < layers; ++layer) {
      const TimeNs t = 10'000 * step + 1'000 * layer;
      s.kernel("moeTopK<float>", t, t + 10);
      s.kernel("fused_moe_kernel", t + 10, t + 210);
      steps.kernel_step.insert(steps.kernel_step.end(), 2, step);
    }
  }
  auto moe = analyze_moe(s.trace, OpRuleSet::builtin(), steps, moe::eager_experts(s.trace));
  ASSERT_TRUE(moe.has_value());
  ASSERT_EQ(moe->layers.size(), 2u);
  ASSERT_EQ(moe->notes.size(), 1u);
  EXPECT_EQ(moe->notes[0].kind, "moe_layer_counts_differ");
  EXPECT_EQ(moe->notes[0].severity, NoteSeverity::kInfo);
  EXPECT_TRUE(moe->notes[0].text.starts_with("passes hold different numbers of MoE layers (layer 0 ran 2 times, layer 1 1): ")) << moe->notes[0].text;
  const std::string json = render_moe_json(*moe);
  EXPECT_NE(json.find("\"notes\": [{\"kind\": \"moe_layer_counts_differ\", \"severity\": \"info\", \"count\": 1, \"text\": \"passes hold"),
            std::string::npos)
      << json;
}

// A toy Switch Transformer run eagerly under torch.profiler with stacks: its router and experts are
// plain GEMMs no kernel name marks, but each layer's SwitchMoE module call holds a SwitchGate call
// (a GEMM and an argmax) and then four expert GEMMs. By construction: 2 forward passes x 3 layers,
// so 3 layers of 2 invocations, 24 expert GEMMs and 12 router kernels. A dense model's gate_proj
// (a Linear inside LlamaMLP) is no MoE.
testing::SyntheticTrace switch_forwards(const char* block, const char* gate) {
  testing::SyntheticTrace s;
  TimeNs now = 1'000'000;
  std::uint32_t correlation = 1;
  const auto launch = [&](const char* name) {
    s.api("cudaLaunchKernel", now, now + 2'000, correlation);
    s.kernel(name, now + 5'000, now + 15'000, correlation++);
    now += 20'000;
  };
  const auto call = [&](const std::string& module, TimeNs start) {
    s.nvtx(59, "nn.Module: " + module, start, now, testing::global_tid(1), kKinetoPythonDomain);
  };
  const char* gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
  for (int pass = 0; pass < 2; ++pass) {
    const TimeNs model = now;
    for (int layer = 0; layer < 3; ++layer) {
      const TimeNs moe_start = now;
      const TimeNs gate_start = now;
      launch(gemm);
      launch("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>>>");
      call(std::string(gate) + "_" + std::to_string(layer), gate_start);
      for (int e = 0; e < 4; ++e) launch(gemm);
      call(std::string(block) + "_" + std::to_string(layer), moe_start);
    }
    call("SwitchTransformer_0", model);
    now += 100'000;
  }
  return s;
}

TEST(Moe, LayersFromTheModelsMoeModulesWhenKernelsAreGenericGemms) {
  const auto s = switch_forwards("SwitchMoE", "SwitchGate");
  StepAnalysis steps;
  steps.kernel_step.assign(s.trace.kernels.size(), -1);
  for (std::size_t i = 0; i < steps.kernel_step.size(); ++i) steps.kernel_step[i] = static_cast<std::int32_t>(i / 18);
  auto moe = analyze_moe(s.trace, OpRuleSet::builtin(), steps, moe::eager_experts(s.trace));
  ASSERT_TRUE(moe.has_value());
  ASSERT_TRUE(moe->present) << moe->evidence;
  EXPECT_NE(moe->evidence.find("SwitchGate, SwitchMoE"), std::string::npos) << moe->evidence;
  ASSERT_EQ(moe->layers.size(), 3u);
  for (const auto& l : moe->layers) {
    EXPECT_EQ(l.invocations, 2);
    EXPECT_EQ(l.ns[static_cast<int>(MoeRole::kExpertGemm)], 2 * 4 * 10'000);
    EXPECT_EQ(l.ns[static_cast<int>(MoeRole::kRouter)], 2 * 2 * 10'000);
  }
  const auto dense = switch_forwards("LlamaMLP", "Linear");
  auto none = analyze_moe(dense.trace, OpRuleSet::builtin(), steps, moe::eager_experts(dense.trace));
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->present) << none->evidence;
}

}  // namespace
}  // namespace kernscope
