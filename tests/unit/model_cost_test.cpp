// The config.json cost model against numbers derived by hand from the public configs in
// tests/fixtures/models (README there) and, where they exist, the published parameter counts.
// Each expected value's derivation is in the comment above it; none was taken from kernscope.
// Checked that these tests fail: counting the router once per expert instead of once per layer
// moves Mixtral's total off 46,702,792,704; reading one expert per token in a batch of 8
// moves Mixtral's batch-8 bytes; dropping the g_idx bytes moves the GPTQ decode bytes.
#include <gtest/gtest.h>

#include <cmath>

#include "analyses/work/model_cost.hpp"
#include "analyses/work/model_cost_utilization.hpp"

namespace kernscope {
namespace {

std::string fixture(const std::string& name) { return std::string(KERNSCOPE_FIXTURES_DIR) + "/models/" + name; }

ModelShape load(const std::string& name) {
  auto shape = read_model_config(fixture(name));
  EXPECT_TRUE(shape.has_value()) << (shape ? "" : shape.error().message);
  return shape ? *shape : ModelShape{};
}

// Doubles hold these integers exactly (all below 2^53).
#define EXPECT_EXACT(actual, expected) EXPECT_EQ(static_cast<double>(actual), static_cast<double>(expected))

// Meta-Llama-3-8B: d 4096, L 32, heads 32, kv 8, head_dim 128, FFN 14336, vocab 128256, untied.
//   attention: q 4096*4096 + k, v 2 * 4096*1024 + o 4096*4096 = 41,943,040
//   FFN: 3 * 4096*14336 = 176,160,768; norms 2 * 4096
//   layer 218,112,000; * 32 = 6,979,584,000; embedding + LM head 2 * 128256*4096 = 1,050,673,152;
//   final norm 4096 → 8,030,261,248 (published: 8.03 B).
TEST(ModelCost, Llama3_8BParameters) {
  const auto s = load("meta-llama-3-8b.json");
  EXPECT_EQ(s.kv_heads, 8);
  EXPECT_EQ(s.head_dim, 128);
  const auto p = count_parameters(s);
  EXPECT_EXACT(p.total, 8'030'261'248LL);
  EXPECT_EXACT(p.active, p.total);
  EXPECT_EXACT(p.per_layer_attention, 41'943'040LL);
}

// One decode step at a context of 4096 (gpu-and-roofline.md, "Bytes per decode step"):
//   weights: (8,030,261,248 - 128256*4096 embedding table) * 2 B + one embedding row 4096 * 2 B
//            = 7,504,924,672 * 2 + 8192 = 15,009,857,536 ("15.01 GB")
//   KV per token 2 * 32 * 8 * 128 * 2 = 131,072; read 4096 * 131,072 = 536,870,912; written 131,072
//   FLOPs: 2 * (32 * (41,943,040 + 176,160,768) + 128256*4096) = 2 * 7,504,658,432 = 15,009,316,864
//          + attention 32 layers * 4 * 32 heads * 128 * 4096 = 2,147,483,648 → 17,156,800,512 ("17.16 GFLOP")
//   activations (vLLM's breakdown, elements per layer): attention reads 4096 + 3*4096, writes
//   (4096 + 2*1024) + 4096 → 26,624; FFN reads 4096 + 3*14336, writes 3*14336 + 4096 → 94,208;
//   * 32 = 3,866,624 + LM head 4096 + 128256 = 3,998,976 elements * 2 B = 7,997,952
TEST(ModelCost, Llama3_8BDecodeStep) {
  const auto s = load("meta-llama-3-8b.json");
  const auto c = decode_cost(s, 1, 4096);
  EXPECT_EXACT(c.weight_bytes, 15'009'857'536LL);
  EXPECT_EXACT(c.kv_read_bytes, 536'870'912LL);
  EXPECT_EXACT(c.kv_write_bytes, 131'072);
  EXPECT_EXACT(c.linear_flops, 15'009'316'864LL);
  EXPECT_EXACT(c.attention_flops, 2'147'483'648LL);
  EXPECT_EXACT(c.activation_bytes, 7'997'952);
}

// Prefill of one 512-token prompt, logits of the last token only:
//   linear 2 * 512 * 6,979,321,856 + 2 * 1 * 525,336,576 = 7,147,876,253,696
//   causal attention 32 * 4 * 32 * 128 * (512 * 513 / 2) = 524,288 * 131,328 = 68,853,694,464
//   KV written 512 * 131,072 = 67,108,864
// With logits for every prompt token the LM head adds 2 * 511 * 525,336,576 = 536,893,980,672.
TEST(ModelCost, Llama3_8BPrefill) {
  const auto s = load("meta-llama-3-8b.json");
  const auto c = prefill_cost(s, 1, 512, false);
  EXPECT_EXACT(c.linear_flops, 7'147'876'253'696LL);
  EXPECT_EXACT(c.attention_flops, 68'853'694'464LL);
  EXPECT_EXACT(c.kv_write_bytes, 67'108'864);
  const auto all = prefill_cost(s, 1, 512, true);
  EXPECT_EXACT(all.linear_flops - c.linear_flops, 536'893'980'672LL);
}

// Llama-3.2-1B: d 2048, L 16, heads 32, kv 8, head_dim 64, FFN 8192, vocab 128256, tied.
//   attention 2048*2048 + 2 * 2048*512 + 2048*2048 = 10,485,760; FFN 3 * 2048*8192 = 50,331,648;
//   norms 4096 → layer 60,821,504; * 16 = 973,144,064; embedding once (tied) 262,668,288;
//   final norm 2048 → 1,235,814,400 (published: 1.24 B, 1,235,814,400 in its safetensors).
// Tied: the LM head reads the table once; decode bytes = 1,235,814,400 * 2 + one row 4096 = 2,471,632,896.
TEST(ModelCost, Llama32_1BTiedEmbeddings) {
  const auto s = load("llama-3.2-1b.json");
  EXPECT_TRUE(s.tied_embeddings);
  const auto p = count_parameters(s);
  EXPECT_EXACT(p.total, 1'235'814'400LL);
  EXPECT_EXACT(p.lm_head, 0);
  EXPECT_EXACT(decode_cost(s, 1, 100).weight_bytes, 2'471'632'896LL);
}

// Mixtral-8x7B: d 4096, L 32, heads 32, kv 8, 8 experts of FFN 14336, 2 per token, vocab 32000.
//   attention 41,943,040; expert 3 * 4096*14336 = 176,160,768; router 4096*8 = 32,768; norms 8192
//   total layer 41,943,040 + 8 * 176,160,768 + 32,768 + 8192 = 1,451,270,144; * 32 = 46,440,644,608
//     + 2 * 32000*4096 = 262,144,000 + 4096 → 46,702,792,704 (published 46.7 B)
//   active layer 41,943,040 + 2 * 176,160,768 + 32,768 + 8192 = 394,305,536; * 32 = 12,617,777,152
//     + 262,144,000 + 4096 → 12,879,925,248 (published 12.9 B)
TEST(ModelCost, MixtralParameters) {
  const auto s = load("mixtral-8x7b-v0.1.json");
  EXPECT_EQ(s.experts, 8);
  EXPECT_EQ(s.experts_per_token, 2);
  EXPECT_EQ(s.expert_intermediate, 14336);
  const auto p = count_parameters(s);
  EXPECT_EXACT(p.total, 46'702'792'704LL);
  EXPECT_EXACT(p.active, 12'879'925'248LL);
}

// Decode bytes: batch 1 touches 2 experts per layer: (12,879,925,248 - 32000*4096) * 2 + 8192
//   = 25,497,714,688. Batch 8 routes 16 token-experts over 8 experts: all of them (vLLM's
//   min(tokens * k, experts)): (46,702,792,704 - 131,072,000) * 2 + 8 rows * 8192 = 93,143,506,944.
// FLOPs per token use the 2 active experts whatever the batch: 2 * (32 * (41,943,040 +
//   2 * 176,160,768 + 32,768) + 131,072,000) = 25,497,174,016, so batch 8 does 8 times that.
TEST(ModelCost, MixtralActiveExperts) {
  const auto s = load("mixtral-8x7b-v0.1.json");
  const auto one = decode_cost(s, 1, 10);
  EXPECT_EXACT(one.weight_bytes, 25'497'714'688LL);
  EXPECT_EXACT(one.linear_flops, 25'497'174'016LL);
  const auto eight = decode_cost(s, 8, 10);
  EXPECT_EXACT(eight.weight_bytes, 93'143'506'944LL);
  EXPECT_EXACT(eight.linear_flops, 8 * 25'497'174'016LL);
}

// Qwen1.5-MoE-A2.7B (qwen2_moe): d 2048, L 24, heads 16 = kv 16, head_dim 128, 60 experts of 1408,
// 4 per token, one shared expert of 5632 with a 2048 x 1 gate, q/k/v biases, vocab 151936.
//   attention 4 * 2048*2048 + biases 3 * 2048 = 16,783,360; router 2048*60 = 122,880; shared gate
//   2048; expert 3 * 2048*1408 = 8,650,752; shared 3 * 2048*5632 = 34,603,008; norms 4096
//   total layer 16,783,360 + 122,880 + 2048 + 60 * 8,650,752 + 34,603,008 + 4096 = 570,560,512;
//     * 24 = 13,693,452,288 + 2 * 151936*2048 = 622,329,856 + 2048 → 14,315,784,192 (published 14.3 B)
//   active layer 16,783,360 + 122,880 + 2048 + 4 * 8,650,752 + 34,603,008 + 4096 = 86,118,400;
//     * 24 = 2,066,841,600 + 622,329,856 + 2048 → 2,689,173,504 (published 2.7 B activated)
TEST(ModelCost, Qwen2MoeSharedExpert) {
  const auto s = load("qwen1.5-moe-a2.7b.json");
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_TRUE(s.shared_expert_gate);
  EXPECT_EQ(s.shared_intermediate, 5632);
  EXPECT_EQ(s.window.front(), 0) << "use_sliding_window false: the whole context";
  const auto p = count_parameters(s);
  EXPECT_EXACT(p.total, 14'315'784'192LL);
  EXPECT_EXACT(p.active, 2'689'173'504LL);
}

// TheBloke/Llama-2-7B-Chat-GPTQ: Llama-2-7B (d 4096, L 32, MHA 32 heads, FFN 11008, vocab 32000,
// 6,738,415,616 parameters) with int4 weights, group 128, act-order, in float16.
//   quantized weights per layer 4 * 4096*4096 + 3 * 4096*11008 = 202,375,168; * 32 = 6,476,005,376
//   bytes per weight 0.5 (int4) + 2/128 (fp16 scale) + 0.5/128 (int4 zero) = 0.51953125
//     → 6,476,005,376 * 0.51953125 = 3,364,487,168
//   g_idx: one int32 per input row: (4 * 4096 + 2 * 4096 + 11008) * 4 * 32 = 4,554,752
//   fp16 norms 65 * 4096 * 2 = 532,480; LM head 32000*4096*2 = 262,144,000; one embedding row 8192
//   decode weights = 3,631,726,592. (Checkpoint size: the same with the whole fp16 embedding table
//   instead of a row: 3,893,862,400 B, TheBloke lists 3.90 GB.)
TEST(ModelCost, GptqWeightBytes) {
  const auto s = load("llama-2-7b-chat-gptq.json");
  EXPECT_DOUBLE_EQ(s.linear.bytes_per_weight, 0.51953125);
  EXPECT_DOUBLE_EQ(s.linear.index_bytes_per_row, 4);
  EXPECT_DOUBLE_EQ(s.lm_head.bytes_per_weight, 2);
  EXPECT_EXACT(count_parameters(s).total, 6'738'415'616LL);
  EXPECT_EXACT(decode_cost(s, 1, 1).weight_bytes, 3'631'726'592LL);
  EXPECT_EQ(model_precision(s), Precision::kFp16) << "weight-only int4 computes in float16";
}

// The same Llama-2-7B in AutoAWQ's format (quantization_config of TheBloke/Llama-2-7B-AWQ: int4,
// group 128, zero points, GEMM kernels; no act-order index): the GPTQ bytes without g_idx:
// 3,364,487,168 + 532,480 + 262,144,000 + 8192 = 3,627,171,840.
TEST(ModelCost, AwqWeightBytes) {
  auto s = parse_model_config(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
      "vocab_size": 32000, "tie_word_embeddings": false, "torch_dtype": "float16",
      "quantization_config": {"quant_method": "awq", "zero_point": true, "group_size": 128, "bits": 4, "version": "gemm"}})");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EXACT(decode_cost(*s, 1, 1).weight_bytes, 3'627'171'840LL);
}

// Meta-Llama-3-8B with fp8 weights (neuralmagic's FP8 checkpoints: quant_method fp8, lm_head in
// ignored_layers): decoder linears 1 B each, 32 * 218,103,808 = 6,979,321,856; bf16 norms
// 65 * 4096 * 2 = 532,480; bf16 LM head 128256*4096*2 = 1,050,673,152; one bf16 row 8192
// → 8,030,535,680 B per decode step, and its matmuls count as fp8 work.
TEST(ModelCost, Fp8WeightBytes) {
  auto s = parse_model_config(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "vocab_size": 128256, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
      "quantization_config": {"activation_scheme": "static", "ignored_layers": ["lm_head"], "quant_method": "fp8"}})");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EXACT(decode_cost(*s, 1, 1).weight_bytes, 8'030'535'680LL);
  EXPECT_EQ(s->linear.name, "fp8");
  EXPECT_EQ(model_precision(*s), Precision::kFp8);
}

// The bundled Llama trace's model (shared/tools/llama_decode_workload.py): d 2048, L 16, heads 32,
// kv 8, head_dim 64, FFN 5632, vocab 32000, untied, bf16.
//   layer 10,485,760 + 3 * 2048*5632 + 4096 = 45,092,864; * 16 = 721,485,824 + 2 * 65,536,000
//   + 2048 = 852,559,872. Decode weights (852,559,872 - 65,536,000) * 2 + 4096 = 1,574,051,840.
// KV per token 2 * 16 * 8 * 64 * 2 = 32,768. Prompt 512, 65 output tokens → 64 decode steps at
// contexts 513..576, mean 544.5: KV read 544.5 * 32,768 = 17,842,176 per mean step.
TEST(ModelCost, BundledWorkloadRun) {
  const auto s = load("llama_decode_workload.json");
  auto m = model_cost(s, ModelRun{.batch = 1, .prompt = 512, .output = 65});
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EXACT(m->params.total, 852'559'872);
  EXPECT_EXACT(m->kv_bytes_per_token, 32'768);
  EXPECT_EQ(m->decode_steps, 64);
  EXPECT_EXACT(m->decode_mean.weight_bytes, 1'574'051'840LL);
  EXPECT_EXACT(m->decode_mean.kv_read_bytes, 17'842'176);
  EXPECT_EXACT(m->decode_first.kv_read_bytes, 513 * 32'768);
  EXPECT_EXACT(m->decode_last.kv_read_bytes, 576 * 32'768);
}

// A window of 100 keys, prompt 50, 101 output tokens: steps attend 51..150 keys, capped at 100:
// 51 + ... + 100 = 3775 plus 50 * 100 → 8775 over 100 steps, mean 87.75 per layer.
// Prefill: query i attends min(i, 100): 1 + ... + 50 = 1275 pairs.
TEST(ModelCost, SlidingWindow) {
  auto s = parse_model_config(R"({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
      "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 128, "vocab_size": 1000, "sliding_window": 100, "torch_dtype": "bfloat16"})");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto m = model_cost(*s, ModelRun{.batch = 1, .prompt = 50, .output = 101});
  ASSERT_TRUE(m.has_value());
  const double per_pair = 4.0 * 4 * 16 * 2;  // 4 * heads * head_dim * layers
  EXPECT_DOUBLE_EQ(m->decode_mean.attention_flops, per_pair * 87.75);
  EXPECT_DOUBLE_EQ(m->prefill.attention_flops, per_pair * 1275);
}

// What is not a decoder-only LLM, or cannot be costed right, is refused with the reason.
TEST(ModelCost, RefusesOtherModels) {
  auto expect_refused = [](const Result<ModelShape>& r, const std::string& words) {
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  };
  expect_refused(read_model_config(fixture("t5-small.json")), "encoder-decoder");
  expect_refused(read_model_config(fixture("vit-base-patch16-224.json")), "vision model");
  expect_refused(read_model_config(fixture("bert-base-uncased.json")), "not a decoder-only language model");
  expect_refused(parse_model_config(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768})"), "'num_hidden_layers' is missing");
  expect_refused(parse_model_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100})"), "no torch_dtype");
  expect_refused(parse_model_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "float16",
      "quantization_config": {"quant_method": "bitsandbytes"}})"), "'bitsandbytes' is not modelled");
  expect_refused(parse_model_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "float16"})"), "does not divide");
  expect_refused(parse_model_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "float16", "kv_lora_rank": 512})"), "latent attention");
  expect_refused(parse_model_config("{\"hidden_size\": 4"), "not JSON");
  expect_refused(parse_model_config("[1, 2]"), "not a JSON object");
  auto missing = read_model_config(fixture("no-such-config.json"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(model_cost(load("meta-llama-3-8b.json"), ModelRun{.batch = 0, .prompt = 1, .output = 1}).has_value());
}

}  // namespace
}  // namespace kernscope
