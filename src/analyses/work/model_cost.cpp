// The arithmetic of the cost model (model_cost.hpp says what it follows). Every sum is in doubles:
// a 70B model's FLOPs for a long prefill pass 2^63.
#include "analyses/work/model_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kernscope {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// Sum over j = 1..n of min(first + j, window) (window 0: no limit): the keys the queries of
// positions first+1 .. first+n attend. Prefill: first 0, n the prompt. Decode steps 1..n after a
// prompt of `first` tokens: step j attends first + j keys.
double attended_sum(double first, double n, std::int64_t window) {
  if (window <= 0) return n * first + n * (n + 1) / 2;
  const double m = std::clamp(d(window) - first, 0.0, n);  // steps still inside the window
  return m * first + m * (m + 1) / 2 + (n - m) * d(window);
}

struct LayerWeights {
  double attention = 0;        // q, k, v, o matrices
  double attention_extra = 0;  // their biases and q/k norms (unquantized)
  double attention_rows = 0;   // input rows of q, k, v, o (GPTQ act-order: one g_idx each)
};

// The q/k/v and o biases (a GEMM epilogue reads them with the matrices).
double attn_bias(const ModelShape& s) {
  const double q = d(s.heads * s.head_dim), kv = d(s.kv_heads * s.head_dim);
  return (s.qkv_bias ? q + 2 * kv : 0) + (s.o_bias ? d(s.hidden) : 0);
}

LayerWeights attention_weights(const ModelShape& s) {
  const double q = d(s.heads * s.head_dim), kv = d(s.kv_heads * s.head_dim), h = d(s.hidden);
  LayerWeights w;
  w.attention = h * q + 2 * h * kv + q * h;
  w.attention_extra = (s.qkv_bias ? q + 2 * kv : 0) + (s.o_bias ? h : 0) + (s.qk_norm ? 2 * d(s.head_dim) : 0);
  w.attention_rows = 3 * h + q;
  return w;
}

// A gated FFN (gate, up: hidden → width; down: width → hidden) of the given width.
double ffn_weights(const ModelShape& s, std::int64_t width) { return 3 * d(s.hidden) * d(width); }
double ffn_rows(const ModelShape& s, std::int64_t width) { return 2 * d(s.hidden) + d(width); }
double ffn_bias(const ModelShape& s, std::int64_t width) { return s.mlp_bias ? 2 * d(width) + d(s.hidden) : 0; }

double router_weights(const ModelShape& s) { return d(s.hidden) * d(s.experts); }
double shared_gate_weights(const ModelShape& s) { return s.shared_expert_gate ? d(s.hidden) : 0; }

// Bytes to read `weights` parameters stored as `f` with `rows` input rows.
double stored_bytes(const WeightFormat& f, double weights, double rows) {
  return weights * f.bytes_per_weight + rows * f.index_bytes_per_row;
}

// Activations a gated FFN of `width` reads and writes for `tokens` tokens (elements): vLLM's
// up/gate input, SiLU input, down input; up/gate output, SiLU output, down output.
double ffn_activations(const ModelShape& s, double tokens, std::int64_t width) {
  const double h = d(s.hidden), w = d(width);
  return tokens * (h + 2 * w + w) + tokens * (2 * w + w + h);
}

// One forward pass over `tokens` tokens of `batch` sequences. attended[l]: the (query, key)
// pairs of layer l summed over the batch's queries; kv_read_tokens[l]: the keys (and values)
// layer l reads per sequence summed over the batch; logits_tokens: the tokens projected onto
// the vocabulary.
PassCost forward_pass(const ModelShape& s, double tokens, double logits_tokens, const std::vector<double>& attended,
                      const std::vector<double>& kv_read_tokens, double kv_written_tokens) {
  PassCost c;
  const double a = s.activation_bytes;
  const double h = d(s.hidden), q = d(s.heads * s.head_dim), kv = d(s.kv_heads * s.head_dim);
  const auto attn = attention_weights(s);
  for (std::size_t l = 0; l < static_cast<std::size_t>(s.layers); ++l) {
    // Attention: projections, then QK^T and AV (2 FLOPs per multiply-add each, per head).
    c.linear_flops += 2 * tokens * attn.attention;
    c.attention_flops += 4 * d(s.heads) * d(s.head_dim) * attended[l];
    c.weight_bytes += stored_bytes(s.linear, attn.attention, attn.attention_rows) + attn.attention_extra * a;
    c.matmul_weight_bytes += stored_bytes(s.linear, attn.attention, attn.attention_rows) + attn_bias(s) * a;
    c.kv_read_bytes += kv_read_tokens[l] * 2 * kv * a;
    c.kv_write_bytes += kv_written_tokens * 2 * kv * a;
    // qkv input, Q into attention, attention output written and read by o_proj; qkv and o
    // outputs. vLLM leaves out the attention output's write; it is counted here.
    c.activation_bytes += tokens * (h + q + q + q) * a + tokens * ((q + 2 * kv) + h) * a;
    c.weight_bytes += 2 * h * a;  // input and post-attention RMSNorm weights

    if (!s.moe_layer[l]) {
      c.linear_flops += 2 * tokens * ffn_weights(s, s.intermediate);
      c.weight_bytes += stored_bytes(s.linear, ffn_weights(s, s.intermediate), ffn_rows(s, s.intermediate)) +
                        ffn_bias(s, s.intermediate) * a;
      c.matmul_weight_bytes += stored_bytes(s.linear, ffn_weights(s, s.intermediate), ffn_rows(s, s.intermediate)) +
                               ffn_bias(s, s.intermediate) * a;
      c.activation_bytes += ffn_activations(s, tokens, s.intermediate) * a;
      continue;
    }
    // MoE: each token runs experts_per_token experts; the weights read are those of the experts
    // any token chose, at most all of them: vLLM's min(tokens * k, experts), i.e. a balanced
    // router that spreads a batch over distinct experts.
    const double routed_tokens = tokens * d(s.experts_per_token);
    const double touched = std::min(routed_tokens, d(s.experts));
    c.linear_flops += 2 * routed_tokens * ffn_weights(s, s.expert_intermediate);
    c.weight_bytes += touched * stored_bytes(s.linear, ffn_weights(s, s.expert_intermediate), ffn_rows(s, s.expert_intermediate));
    c.matmul_weight_bytes += touched * stored_bytes(s.linear, ffn_weights(s, s.expert_intermediate), ffn_rows(s, s.expert_intermediate));
    c.activation_bytes += ffn_activations(s, routed_tokens, s.expert_intermediate) * a;
    // The router (and Qwen2-MoE's shared-expert gate): small matmuls, left unquantized by GPTQ,
    // AWQ and fp8 checkpoints.
    c.linear_flops += 2 * tokens * (router_weights(s) + shared_gate_weights(s));
    c.weight_bytes += (router_weights(s) + shared_gate_weights(s)) * a;
    c.matmul_weight_bytes += (router_weights(s) + shared_gate_weights(s)) * a;
    c.activation_bytes += tokens * d(s.experts) * a;  // router logits written
    if (s.shared_intermediate > 0) {
      c.linear_flops += 2 * tokens * ffn_weights(s, s.shared_intermediate);
      c.weight_bytes += stored_bytes(s.linear, ffn_weights(s, s.shared_intermediate), ffn_rows(s, s.shared_intermediate));
      c.matmul_weight_bytes += stored_bytes(s.linear, ffn_weights(s, s.shared_intermediate), ffn_rows(s, s.shared_intermediate));
      c.activation_bytes += ffn_activations(s, tokens, s.shared_intermediate) * a;
    }
  }
  c.weight_bytes += h * a;                                  // final norm
  c.weight_bytes += std::min(tokens, d(s.vocab)) * h * a;   // embedding rows gathered (0 FLOPs)
  c.linear_flops += 2 * logits_tokens * h * d(s.vocab);     // vocabulary projection
  c.weight_bytes += stored_bytes(s.lm_head, h * d(s.vocab), h);
  c.matmul_weight_bytes += stored_bytes(s.lm_head, h * d(s.vocab), h);
  c.activation_bytes += logits_tokens * (h + d(s.vocab)) * a;
  return c;
}

}  // namespace

ParameterCounts count_parameters(const ModelShape& s) {
  ParameterCounts p;
  const auto attn = attention_weights(s);
  p.per_layer_attention = attn.attention + attn.attention_extra;
  for (std::size_t l = 0; l < static_cast<std::size_t>(s.layers); ++l) {
    const double common = p.per_layer_attention + 2 * d(s.hidden);  // attention and its two norms
    if (!s.moe_layer[l]) {
      const double ffn = ffn_weights(s, s.intermediate) + ffn_bias(s, s.intermediate);
      p.total += common + ffn;
      p.active += common + ffn;
      continue;
    }
    const double expert = ffn_weights(s, s.expert_intermediate);
    const double shared = s.shared_intermediate > 0 ? ffn_weights(s, s.shared_intermediate) : 0;
    const double gates = router_weights(s) + shared_gate_weights(s);
    p.total += common + d(s.experts) * expert + shared + gates;
    p.active += common + d(s.experts_per_token) * expert + shared + gates;
  }
  p.embedding = d(s.vocab) * d(s.hidden);
  p.lm_head = s.tied_embeddings ? 0 : d(s.vocab) * d(s.hidden);
  const double outside = p.embedding + p.lm_head + d(s.hidden);  // + the final norm
  p.total += outside;
  p.active += outside;
  return p;
}

PassCost prefill_cost(const ModelShape& s, std::int64_t batch, std::int64_t prompt, bool logits_all) {
  std::vector<double> attended, kv_read;
  for (auto w : s.window) {
    attended.push_back(d(batch) * attended_sum(0, d(prompt), w));
    kv_read.push_back(d(batch) * d(prompt));  // the prompt's keys and values, read once (ideal)
  }
  return forward_pass(s, d(batch) * d(prompt), d(batch) * (logits_all ? d(prompt) : 1.0), attended, kv_read,
                      d(batch) * d(prompt));
}

PassCost decode_cost(const ModelShape& s, std::int64_t batch, double context) {
  std::vector<double> attended;
  for (auto w : s.window) attended.push_back(d(batch) * (w > 0 ? std::min(context, d(w)) : context));
  return forward_pass(s, d(batch), d(batch), attended, attended, d(batch));
}

Result<ModelCost> model_cost(const ModelShape& shape, const ModelRun& run) {
  if (run.batch < 1 || run.prompt < 1 || run.output < 1) {
    return make_error(ErrorCode::kInvalidArgument, "--batch, --prompt and --output must be at least 1");
  }
  if (run.batch > 1'000'000 || run.prompt > 100'000'000 || run.output > 100'000'000) {
    return make_error(ErrorCode::kInvalidArgument, "--batch, --prompt or --output is out of range");
  }
  ModelCost m;
  m.shape = shape;
  m.run = run;
  m.params = count_parameters(shape);
  m.kv_bytes_per_token = 2 * d(shape.layers) * d(shape.kv_heads) * d(shape.head_dim) * shape.activation_bytes;
  m.prefill = prefill_cost(shape, run.batch, run.prompt, run.prefill_logits_all);
  m.decode_steps = run.output - 1;
  if (m.decode_steps == 0) return m;
  const double n = d(m.decode_steps), p = d(run.prompt);
  m.decode_first = decode_cost(shape, run.batch, p + 1);
  m.decode_last = decode_cost(shape, run.batch, p + n);
  // The mean step: every term but the attended keys is the same each step; those are averaged
  // per layer (a window caps them).
  std::vector<double> attended;
  for (auto w : shape.window) attended.push_back(d(run.batch) * attended_sum(p, n, w) / n);
  m.decode_mean = forward_pass(shape, d(run.batch), d(run.batch), attended, attended, d(run.batch));
  return m;
}

}  // namespace kernscope
