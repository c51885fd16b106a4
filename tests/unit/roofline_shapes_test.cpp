// FLOPs and bytes of operators from their recorded shapes, against values worked out by hand
// (python3 -c "print(2*8*14336*4096)" for the arithmetic; the formulas are the textbook ones stated
// in shape_flops.hpp).
#include <gtest/gtest.h>

#include "analyses/work/shape_flops.hpp"

namespace kernscope::shapes {
namespace {

OpArgs args(std::string_view op, std::string_view dims, std::string_view types, std::string_view concrete = "[]") {
  OpArgs a;
  a.op = op;
  a.shapes = parse_arg_shapes(dims).value();
  a.types = parse_string_list(types).value();
  a.concrete = parse_string_list(concrete).value();
  return a;
}

double flops_of(const OpCost& c, Precision p) { return c.flops[static_cast<std::size_t>(p)]; }

TEST(ShapeParsing, NestedListsAndStrings) {
  auto s = parse_arg_shapes("[[8, 4096], [4096, 14336], []]").value();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].dims, (std::vector<std::int64_t>{8, 4096}));
  EXPECT_EQ(s[1].dims, (std::vector<std::int64_t>{4096, 14336}));
  EXPECT_TRUE(s[2].dims.empty());
  auto list = parse_arg_shapes("[[[1, 559, 32], [1, 559, 32]], []]").value();  // aten::cat's TensorList
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(list[0].is_list);
  EXPECT_EQ(list[0].list.size(), 2u);
  EXPECT_FALSE(parse_arg_shapes("[[8, 4096]").has_value());
  EXPECT_FALSE(parse_arg_shapes("[[8, x]]").has_value());
  EXPECT_FALSE(parse_arg_shapes("").has_value());
  EXPECT_EQ(parse_string_list(R"(["c10::BFloat16", "Scalar", ""])").value(),
            (std::vector<std::string>{"c10::BFloat16", "Scalar", ""}));
  EXPECT_FALSE(parse_string_list("[1, 2]").has_value());
}

TEST(ShapeParsing, ElementTypes) {
  EXPECT_EQ(element_type("c10::BFloat16")->bytes, 2);
  EXPECT_EQ(element_type("c10::BFloat16")->precision, Precision::kBf16);
  EXPECT_EQ(element_type("float")->precision, Precision::kFp32);
  EXPECT_EQ(element_type("c10::Float8_e4m3fn")->bytes, 1);
  EXPECT_EQ(element_type("long int")->bytes, 8);
  EXPECT_FALSE(element_type("Scalar").has_value());
  EXPECT_FALSE(element_type("TensorList").has_value());
}

// The decode GEMM of the reference's H100 measurement: M=8, N=14336, K=4096 in bf16.
TEST(OpCost, MmIsTwoMNK) {
  auto c = op_cost(args("aten::mm", "[[8, 4096], [4096, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])")).value();
  EXPECT_DOUBLE_EQ(flops_of(c, Precision::kBf16), 939524096.0);  // 2*8*14336*4096
  EXPECT_DOUBLE_EQ(c.total_flops(), 939524096.0);
  EXPECT_DOUBLE_EQ(c.bytes, 117735424.0);  // (8*4096 + 4096*14336 + 8*14336) * 2
  EXPECT_EQ(c.detail, "aten::mm [8, 4096] x [4096, 14336] bf16");
  // Mismatched inner dimensions: no formula fits.
  EXPECT_FALSE(op_cost(args("aten::mm", "[[8, 4096], [4095, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])")));
}

// Qwen1.5-0.5B's projection in the tracelens fixtures: addmm(bias[1024], [8944, 1024], [1024, 1024]).
TEST(OpCost, AddmmAndLinearAgree) {
  auto addmm = op_cost(args("aten::addmm", "[[1024], [8944, 1024], [1024, 1024], [], []]",
                            R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])"))
                   .value();
  EXPECT_DOUBLE_EQ(addmm.total_flops(), 18756927488.0);  // 2*8944*1024*1024
  EXPECT_DOUBLE_EQ(addmm.bytes, 38733824.0);             // (1024 + 8944*1024*2 + 1024*1024) * 2
  auto linear = op_cost(args("aten::linear", "[[16, 559, 1024], [1024, 1024], [1024]]",
                             R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])"))
                    .value();
  EXPECT_DOUBLE_EQ(linear.total_flops(), 18756927488.0);  // M = 16*559 = 8944
  EXPECT_DOUBLE_EQ(linear.bytes, addmm.bytes);
}

TEST(OpCost, BmmMatmulAndFp32) {
  auto bmm = op_cost(args("aten::bmm", "[[4, 128, 64], [4, 64, 256]]", R"(["float", "float"])")).value();
  EXPECT_DOUBLE_EQ(flops_of(bmm, Precision::kFp32), 16777216.0);  // 2*4*128*256*64
  // matmul broadcasts [2, 1, 8, 16] @ [3, 16, 4]: batch 2*3, 2*6*8*4*16 FLOPs.
  auto mm = op_cost(args("aten::matmul", "[[2, 1, 8, 16], [3, 16, 4]]", R"(["c10::Half", "c10::Half"])")).value();
  EXPECT_DOUBLE_EQ(flops_of(mm, Precision::kFp16), 2.0 * 6 * 8 * 4 * 16);
}

TEST(OpCost, AttentionCausalConventions) {
  const char* types = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])";
  // FlashAttention's entry point, (batch, length, heads, dim), causal with Lq = Lk = 559:
  // 559*560/2 = 156520 pairs, 2*B*H*P*E twice = 4*16*16*156520*64.
  auto flash = op_cost(args("aten::_flash_attention_forward", "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64]]",
                            types, R"(["", "", "", "", "", "559", "559", "0.", "True", "False"])"))
                   .value();
  EXPECT_DOUBLE_EQ(flash.total_flops(), 10257694720.0);
  auto full = op_cost(args("aten::_flash_attention_forward", "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64]]",
                           types, R"(["", "", "", "", "", "559", "559", "0.", "False", "False"])"))
                  .value();
  EXPECT_DOUBLE_EQ(full.total_flops(), 20478754816.0);  // 4*16*16*559*559*64
  // Lq = 2, Lk = 5, E = 8: top-left (SDPA) 1 + 2 = 3 pairs, bottom-right (flash) 4 + 5 = 9, none 10.
  const char* small = "[[1, 1, 2, 8], [1, 1, 5, 8], [1, 1, 5, 8]]";
  auto sdpa = op_cost(args("aten::scaled_dot_product_attention", small, types, R"(["", "", "", "", "0.", "True"])")).value();
  EXPECT_DOUBLE_EQ(sdpa.total_flops(), 2.0 * 3 * 8 * 2);
  auto bottom = op_cost(args("aten::_flash_attention_forward", "[[1, 2, 1, 8], [1, 5, 1, 8], [1, 5, 1, 8]]", types,
                             R"(["", "", "", "", "", "2", "5", "0.", "True"])"))
                    .value();
  EXPECT_DOUBLE_EQ(bottom.total_flops(), 2.0 * 9 * 8 * 2);
  // GQA: 32 query heads over 8 KV heads, one query, 100 keys. FLOPs by query heads, bytes by KV heads.
  auto gqa = op_cost(args("aten::_scaled_dot_product_flash_attention", "[[1, 32, 1, 128], [1, 8, 100, 128], [1, 8, 100, 128]]",
                          types, R"(["", "", "", "0.", "False"])"))
                 .value();
  EXPECT_DOUBLE_EQ(gqa.total_flops(), 1638400.0);  // 4*32*100*128
  EXPECT_DOUBLE_EQ(gqa.bytes, 425984.0);           // (32*128 q + 2*8*100*128 kv + 32*128 out) * 2
  // Variable-length (3-D) attention has no per-sequence lengths: no formula.
  EXPECT_FALSE(op_cost(args("aten::_flash_attention_forward", "[[100, 16, 64], [100, 16, 64], [100, 16, 64]]", types)));
}

TEST(OpCost, AttentionBackwardIsFiveMatmuls) {
  // SDPA's flash backward (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q,
  // max_k, dropout_p, is_causal, ...): B 2, 8 query heads over 2 KV heads, L 128, E 64, causal.
  // Pairs 128*129/2 = 8256; 2*B*H*P*(3E + 2Ev) = 2*2*8*8256*320.
  const char* dims = "[[2, 8, 128, 64], [2, 8, 128, 64], [2, 2, 128, 64], [2, 2, 128, 64], [2, 8, 128, 64], [2, 8, 128], [], [], [], [], [], [], [], []]";
  const char* types = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "long int", "long int"])";
  auto bwd = op_cost(args("aten::_scaled_dot_product_flash_attention_backward", dims, types,
                          R"(["", "", "", "", "", "", "", "", "128", "128", "0.", "True", "", ""])"))
                 .value();
  EXPECT_DOUBLE_EQ(bwd.total_flops(), 84541440.0);
  // The forward of the same shapes: 2*2*8*8256*128; the backward is 2.5 times it.
  auto fwd = op_cost(args("aten::_scaled_dot_product_flash_attention", "[[2, 8, 128, 64], [2, 2, 128, 64], [2, 2, 128, 64]]",
                          R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])", R"(["", "", "", "0.", "True"])"))
                 .value();
  EXPECT_DOUBLE_EQ(fwd.total_flops(), 33816576.0);
  EXPECT_DOUBLE_EQ(bwd.total_flops() / fwd.total_flops(), 2.5);
  // Read grad_out, q, out (262144 B each), k, v (65536 each), logsumexp (8192, fp32); write dq,
  // dk, dv (262144 + 2*65536).
  EXPECT_DOUBLE_EQ(bwd.bytes, 1318912.0);
  EXPECT_EQ(bwd.flops_high, 0.0);  // exact
  // The kernels' own entry point (batch, length, heads, dim), not causal: 2*2*8*128*128*320.
  auto flash = op_cost(args("aten::_flash_attention_backward",
                            "[[2, 128, 8, 64], [2, 128, 8, 64], [2, 128, 2, 64], [2, 128, 2, 64], [2, 128, 8, 64], [2, 8, 128], [], [], [], [], []]",
                            types, R"(["", "", "", "", "", "", "", "", "128", "128", "0.", "False"])"))
                   .value();
  EXPECT_DOUBLE_EQ(flash.total_flops(), 167772160.0);
}

TEST(OpCost, VarlenAttentionIsBounded) {
  const char* types = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int"])";
  // 1000 packed tokens in 4 sequences (cu_seqlens of 5) of at most 400, 8 heads of 64. The pairs
  // sum L_i^2: at least 1000^2/4 = 250000 (equal lengths), at most 400^2 + 400^2 + 200^2 = 360000.
  // FLOPs 2*8*pairs*(64 + 64): 512,000,000 to 737,280,000.
  const char* packed = "[[1000, 8, 64], [1000, 8, 64], [1000, 8, 64], [5], [5]]";
  auto full = op_cost(args("aten::_flash_attention_forward", packed, types,
                           R"(["", "", "", "", "", "400", "400", "0.", "False"])"))
                  .value();
  EXPECT_DOUBLE_EQ(full.total_flops(), 512000000.0);
  EXPECT_DOUBLE_EQ(full.flops_high, 737280000.0);
  EXPECT_DOUBLE_EQ(full.bytes, 4096000.0);  // q, k, v read and out written: 4 * 1000*8*64*2
  EXPECT_NE(full.detail.find("the lower counted"), std::string::npos) << full.detail;
  // Lengths 400, 300, 200, 100 (sum 1000): 300000 pairs, inside the bounds.
  EXPECT_LE(full.total_flops(), 2.0 * 8 * 300000 * 128);
  EXPECT_GE(full.flops_high, 2.0 * 8 * 300000 * 128);
  // Causal: sum L_i (L_i + 1) / 2, between (250000 + 1000) / 2 and (360000 + 1000) / 2.
  auto causal = op_cost(args("aten::_flash_attention_forward", packed, types,
                             R"(["", "", "", "", "", "400", "400", "0.", "True"])"))
                    .value();
  EXPECT_DOUBLE_EQ(causal.total_flops(), 257024000.0);
  EXPECT_DOUBLE_EQ(causal.flops_high, 369664000.0);
  // Efficient attention packs the batch as [1, T, H, E] with cu_seqlens at arguments 4 and 5.
  auto efficient = op_cost(args("aten::_efficient_attention_forward", "[[1, 1000, 8, 64], [1, 1000, 8, 64], [1, 1000, 8, 64], [], [5], [5]]",
                                R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "int", "int"])",
                                R"(["", "", "", "", "", "", "400", "400", "0.", "0"])"))
                       .value();
  EXPECT_DOUBLE_EQ(efficient.total_flops(), 512000000.0);
  EXPECT_DOUBLE_EQ(efficient.flops_high, 737280000.0);
  // A decode step: one query in each of 4 sequences over 2000 cached keys in all: exactly 2000
  // pairs (2*8*2000*128 FLOPs).
  auto decode = op_cost(args("aten::_flash_attention_forward", "[[4, 8, 64], [2000, 8, 64], [2000, 8, 64], [5], [5]]", types,
                             R"(["", "", "", "", "", "1", "800", "0.", "True"])"))
                    .value();
  EXPECT_DOUBLE_EQ(decode.total_flops(), 4096000.0);
  EXPECT_DOUBLE_EQ(decode.flops_high, 4096000.0);
  // Queries against other keys: at least a key per query (40 * 2*8*128), at most each of the 2000
  // keys seen by the 10 queries of the longest query sequence... min(40*800, 2000*10) = 20000 pairs.
  auto cross = op_cost(args("aten::_flash_attention_forward", "[[40, 8, 64], [2000, 8, 64], [2000, 8, 64], [5], [5]]", types,
                            R"(["", "", "", "", "", "10", "800", "0.", "False"])"))
                   .value();
  EXPECT_DOUBLE_EQ(cross.total_flops(), 40 * 2.0 * 8 * 128);
  EXPECT_DOUBLE_EQ(cross.flops_high, 20000 * 2.0 * 8 * 128);
}

TEST(OpCost, ConvolutionNeedsItsStride) {
  // ResNet's first layer: 32x3x224x224 * 64x3x7x7, stride 2, padding 3 -> 112x112 outputs.
  const char* dims = "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]";
  const char* types = R"(["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"])";
  auto conv = op_cost(args("aten::convolution", dims, types, R"(["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"])")).value();
  EXPECT_DOUBLE_EQ(flops_of(conv, Precision::kFp32), 7552892928.0);  // 2*32*64*112*112*3*49
  EXPECT_DOUBLE_EQ(conv.bytes, 122065664.0);                         // (32*3*224*224 + 64*3*49 + 32*64*112*112) * 4
  EXPECT_FALSE(op_cost(args("aten::convolution", dims, types)));     // older traces record no stride
}

TEST(OpCost, ElementwiseNormsCopies) {
  // mul of a bf16 tensor by a 0-dim double tensor: one FLOP per output element, on CUDA cores.
  auto mul = op_cost(args("aten::mul", "[[16, 559, 1024], []]", R"(["c10::BFloat16", "double"])")).value();
  EXPECT_DOUBLE_EQ(flops_of(mul, Precision::kFp32), 16.0 * 559 * 1024);
  EXPECT_DOUBLE_EQ(mul.bytes, 16.0 * 559 * 1024 * 2 * 2 + 8);  // a 0-dim tensor does not widen the bf16 output
  auto add = op_cost(args("aten::add", "[[4, 1, 8], [1, 3, 8], []]", R"(["float", "float", "Scalar"])")).value();
  EXPECT_DOUBLE_EQ(add.total_flops(), 4.0 * 3 * 8);  // broadcast output
  EXPECT_DOUBLE_EQ(add.bytes, (32.0 + 24 + 96) * 4);
  auto ln = op_cost(args("aten::native_layer_norm", "[[8, 4096], [], [4096], [4096], []]",
                         R"(["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"])"))
                .value();
  EXPECT_DOUBLE_EQ(ln.total_flops(), 5.0 * 8 * 4096);  // 5 per element with an affine weight
  EXPECT_DOUBLE_EQ(ln.bytes, (2.0 * 8 * 4096 + 2 * 4096) * 2);
  auto copy = op_cost(args("aten::copy_", "[[16, 1024], [16, 1024], []]", R"(["c10::BFloat16", "float", "Scalar"])")).value();
  EXPECT_DOUBLE_EQ(copy.total_flops(), 0.0);
  EXPECT_DOUBLE_EQ(copy.bytes, 16.0 * 1024 * (2 + 4));
  // index_select(self [10, 4], dim 0, index [3]): 3 rows of 4 floats read and written, 3 int64 indices.
  auto gathered = op_cost(args("aten::index_select", "[[10, 4], [], [3]]", R"(["float", "Scalar", "long int"])", R"(["", "0", ""])")).value();
  EXPECT_DOUBLE_EQ(gathered.bytes, 2.0 * 3 * 4 * 4 + 3 * 8);
  EXPECT_FALSE(op_cost(args("aten::index_select", "[[10, 4], [], [3]]", R"(["float", "Scalar", "long int"])")));  // no dim recorded
  // cat records its inputs as a TensorList without a type: only with an assumed one.
  auto cat = args("aten::cat", "[[[1, 559, 32], [1, 559, 32]], []]", R"(["TensorList", "Scalar"])");
  EXPECT_FALSE(op_cost(cat));
  cat.assumed_type = ElementType{Precision::kOther, 4};
  EXPECT_DOUBLE_EQ(op_cost(cat)->bytes, 2.0 * 2 * 559 * 32 * 4);
  EXPECT_FALSE(has_formula("aten::view"));
}

// emit_nvtx records no types: the element type comes from what the caller assumes (a kernel-name hint).
TEST(OpCost, AssumedTypeWithoutTypes) {
  OpArgs a;
  a.op = "aten::mm";
  a.shapes = parse_arg_shapes("[[8, 4096], [4096, 14336]]").value();
  a.assumed_type = ElementType{Precision::kFp16, 2};
  auto c = op_cost(a).value();
  EXPECT_DOUBLE_EQ(flops_of(c, Precision::kFp16), 939524096.0);
  EXPECT_EQ(c.detail, "aten::mm [8, 4096] x [4096, 14336] fp16 (assumed)");
  a.assumed_type.reset();
  EXPECT_FALSE(op_cost(a));
}

}  // namespace
}  // namespace kernscope::shapes
