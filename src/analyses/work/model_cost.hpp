// The analytic cost of a decoder LLM from its Hugging Face config.json: parameters, and the FLOPs
// and DRAM bytes of a prefill and of a decode step for a batch, prompt and output length. This is
// what MBU (bytes per decode step / step time / peak bandwidth) and MFU (FLOPs / time / peak
// FLOP/s) divide by the trace's measured times.
//
// The model follows vLLM's analytic perf model (vllm-project/vllm, vllm/v1/metrics/perf.py:
// AttentionMetrics, FfnMetrics, UnembedMetrics): FLOPs are 2 per multiply-add of every matmul
// (QKV/O projections, attention QK^T and AV over the context, gated FFN or the active experts,
// the vocabulary projection of the tokens that need logits); bytes are every weight the step
// touches read once, the KV cache read over the context and written for the new tokens, and the
// activations each matmul reads and writes. Where this file differs from vLLM it says so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"

namespace kernscope {

// How the decoder's linear layers are stored: plain (the config's dtype) or quantized. Bytes per
// weight include what the kernel must read besides the payload (group scales and zero points).
struct WeightFormat {
  std::string name;             // "bfloat16", "gptq int4, group 128", "fp8"
  double bytes_per_weight = 2;  // per parameter, scales and zero points spread over the group
  double index_bytes_per_row = 0;  // GPTQ act-order: one int32 g_idx per input row of each linear
};

// What the cost model reads from config.json (names as Hugging Face spells them).
struct ModelShape {
  std::string model_type;        // "llama", "mixtral", "qwen2_moe", ...
  std::string architecture;      // architectures[0], "" when absent
  std::int64_t layers = 0;       // num_hidden_layers
  std::int64_t hidden = 0;       // hidden_size
  std::int64_t heads = 0;        // num_attention_heads
  std::int64_t kv_heads = 0;     // num_key_value_heads (GQA), = heads when absent
  std::int64_t head_dim = 0;     // head_dim, else hidden / heads
  std::int64_t intermediate = 0; // intermediate_size: the dense FFN width
  std::int64_t vocab = 0;        // vocab_size
  bool tied_embeddings = false;  // tie_word_embeddings: the LM head is the embedding table

  // Mixture of experts (0 experts: dense).
  std::int64_t experts = 0;            // num_experts / num_local_experts / n_routed_experts
  std::int64_t experts_per_token = 0;  // num_experts_per_tok
  std::int64_t expert_intermediate = 0;  // moe_intermediate_size, else intermediate_size (Mixtral)
  std::int64_t shared_intermediate = 0;  // summed width of the shared experts (0: none)
  bool shared_expert_gate = false;       // Qwen2-MoE's sigmoid gate on the shared expert (hidden x 1)
  std::vector<bool> moe_layer;           // per layer: its FFN is the MoE (else the dense FFN)

  // Per layer: the attention window in tokens (0: the whole context).
  std::vector<std::int64_t> window;

  // Biases and extra norms, counted as parameters (their FLOPs are not counted).
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false;  // Qwen3: RMSNorm of each head's q and k (head_dim each)

  double activation_bytes = 2;  // torch_dtype's element size: activations, KV cache, unquantized weights
  std::string dtype;            // torch_dtype as written
  WeightFormat linear;          // the decoder layers' projections (q/k/v/o, FFN, experts)
  WeightFormat lm_head;         // the vocabulary projection (quantized only where the config says)
  std::vector<Note> notes;  // assumptions made while reading, said to the user
};

// Reads config.json; a file that is not a decoder-only LLM config (encoder-decoder, vision,
// encoder-only, missing sizes, an attention or quantization this model does not cover) is an
// error saying why.
Result<ModelShape> read_model_config(const std::string& path);
Result<ModelShape> parse_model_config(std::string_view json, const std::string& source = "config.json");

struct ParameterCounts {
  double total = 0;      // every parameter once (a tied LM head once)
  double active = 0;     // those one token uses: only experts_per_token routed experts per MoE layer
  double embedding = 0;  // vocab x hidden (the input table)
  double lm_head = 0;    // vocab x hidden, 0 when tied
  double per_layer_attention = 0;  // q, k, v, o (+ biases, q/k norms) of one layer
};
ParameterCounts count_parameters(const ModelShape& shape);

// What a forward pass costs. FLOPs: matmuls only (2 per multiply-add); norms, activations,
// softmax and rotary embedding are left out (they are a few per mille of it).
struct PassCost {
  double linear_flops = 0;     // projections, FFN / experts, router, LM head
  double attention_flops = 0;  // QK^T and AV: 4 * heads * head_dim per (query, attended key) pair
  double weight_bytes = 0;     // each weight the pass touches, once (the embedding: its rows only)
  double matmul_weight_bytes = 0;  // of those, the matrices matmul kernels read (q/k/v/o, FFN or the
                                   // experts touched, router, LM head; scales, g_idx and biases with
                                   // them): the bytes a decode step's GEMV/GEMM kernels must move
  double kv_read_bytes = 0;    // keys and values attention reads (decode: the cache over the context)
  double kv_write_bytes = 0;   // keys and values of the new tokens written to the cache
  double activation_bytes = 0; // matmul inputs read and outputs written (vLLM's breakdown)
  double flops() const { return linear_flops + attention_flops; }
  double bytes() const { return weight_bytes + kv_read_bytes + kv_write_bytes + activation_bytes; }
};

// The run the trace holds. Output tokens count the one the prefill produces, as vLLM's and
// Hugging Face's max_new_tokens do: `output` tokens take output - 1 decode steps.
struct ModelRun {
  std::int64_t batch = 1;
  std::int64_t prompt = 0;
  std::int64_t output = 1;
  // The prefill computes logits for every prompt token (a plain model(input_ids) call) instead of
  // the last one only (vLLM, generate()).
  bool prefill_logits_all = false;
};

struct ModelCost {
  ModelShape shape;
  ModelRun run;
  ParameterCounts params;
  double kv_bytes_per_token = 0;  // 2 (K, V) * layers * kv_heads * head_dim * element size
  PassCost prefill;               // the whole batch's prefill
  std::int64_t decode_steps = 0;  // output - 1
  PassCost decode_mean;           // one decode step, averaged over the decode steps
  PassCost decode_first, decode_last;
};

// Causal attention: query i of a sequence attends keys 1..i (a causal kernel's work), limited to
// the layer's window.
PassCost prefill_cost(const ModelShape& shape, std::int64_t batch, std::int64_t prompt, bool logits_all);
// One decode step of `batch` sequences, each attending `context` tokens (the new one included).
// Averaging over steps uses a fractional context: every term is linear in it but the windowed
// attention, which the caller averages itself.
PassCost decode_cost(const ModelShape& shape, std::int64_t batch, double context);

Result<ModelCost> model_cost(const ModelShape& shape, const ModelRun& run);

}  // namespace kernscope
