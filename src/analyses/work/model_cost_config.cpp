// Reading a Hugging Face config.json into the cost model's shape. Names and defaults are those of
// transformers' configuration classes (LlamaConfig, MixtralConfig, Qwen2MoeConfig, ...); what is
// not a decoder-only LLM, or uses an attention or quantization the model does not cover, is
// refused with the reason instead of being costed wrong.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "analyses/work/model_cost.hpp"

namespace kernscope {
namespace {

namespace dom = simdjson::dom;

Error bad(const std::string& source, const std::string& why) {
  return Error{ErrorCode::kBadInput, source + ": " + why};
}

std::optional<dom::element> field(dom::object o, std::string_view key) {
  dom::element e;
  if (o[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return e;
}

// A whole number, written as 4096 or 4096.0; nullopt when absent or null.
Result<std::optional<std::int64_t>> whole(dom::object o, std::string_view key, const std::string& source) {
  auto e = field(o, key);
  if (!e) return std::optional<std::int64_t>{};
  std::int64_t i = 0;
  if (e->get_int64().get(i) == simdjson::SUCCESS) return std::optional<std::int64_t>{i};
  double d = 0;
  if (e->get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9e15) {
    return std::optional<std::int64_t>{static_cast<std::int64_t>(d)};
  }
  return std::unexpected(bad(source, fmt::format("'{}' is not a whole number", key)));
}

Result<std::int64_t> positive(dom::object o, std::string_view key, const std::string& source) {
  auto v = whole(o, key, source);
  if (!v) return std::unexpected(v.error());
  if (!*v) return std::unexpected(bad(source, fmt::format("'{}' is missing", key)));
  if (**v <= 0) return std::unexpected(bad(source, fmt::format("'{}' must be positive (is {})", key, **v)));
  return **v;
}

bool flag(dom::object o, std::string_view key, bool fallback) {
  auto e = field(o, key);
  bool b = fallback;
  if (e && e->get_bool().get(b) == simdjson::SUCCESS) return b;
  return fallback;
}

std::string text(dom::object o, std::string_view key) {
  auto e = field(o, key);
  std::string_view s;
  if (e && e->get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return {};
}

// torch_dtype (or `dtype`, its name since transformers 4.56) → bytes per element.
std::optional<double> dtype_bytes(std::string_view dtype) {
  if (dtype.starts_with("torch.")) dtype.remove_prefix(6);
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "half") return 2.0;
  if (dtype == "float32" || dtype == "float") return 4.0;
  if (dtype == "float8_e4m3fn" || dtype == "float8_e5m2") return 1.0;
  return std::nullopt;
}

// Model types whose FFN is gated (gate, up, down: 3 matrices) and whose q/k/v carry a bias by
// construction, from their transformers modeling files.
bool qkv_bias_by_type(std::string_view type) {
  return type == "qwen2" || type == "qwen2_moe";
}
bool qk_norm_by_type(std::string_view type) {
  return type == "qwen3" || type == "qwen3_moe";
}
// Decoder families laid out as Llama (RMSNorm, gated FFN, no biases unless the config says so).
bool llama_layout(std::string_view type) {
  static constexpr std::string_view kTypes[] = {"llama",  "mistral", "mixtral",   "qwen2", "qwen2_moe",
                                                "qwen3",  "qwen3_moe", "granite", "olmo2", "internlm2",
                                                "yi",     "deepseek"};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

// A vision, encoder-only or encoder-decoder config, or one a decoder-only LLM cannot be read from:
// the reason, else empty.
std::string not_a_decoder(dom::object o, const std::string& architecture) {
  if (flag(o, "is_encoder_decoder", false)) return "an encoder-decoder model (is_encoder_decoder)";
  for (auto key : {"vision_config", "image_size", "patch_size", "num_channels"}) {
    if (field(o, key)) return fmt::format("a vision model ('{}')", key);
  }
  if (field(o, "text_config")) return "a multimodal model (text_config): pass the text model's config";
  if (!architecture.empty() && !architecture.ends_with("ForCausalLM") && !architecture.ends_with("LMHeadModel")) {
    return fmt::format("not a decoder-only language model (architectures: {})", architecture);
  }
  return {};
}

// quantization_config → how the decoder's linear layers are stored.
Result<void> read_quantization(dom::object o, ModelShape& s, const std::string& source) {
  auto qe = field(o, "quantization_config");
  s.linear = WeightFormat{s.dtype, s.activation_bytes, 0};
  s.lm_head = s.linear;
  if (!qe) return {};
  dom::object q;
  if (qe->get_object().get(q) != simdjson::SUCCESS) return std::unexpected(bad(source, "quantization_config is not an object"));
  const std::string method = text(q, "quant_method");
  if (method == "gptq" || method == "awq") {
    // AutoGPTQ / AutoAWQ checkpoints: int4 (or int2/3/8) weights packed in int32 words, and per
    // group of `group_size` input rows an fp16 scale and a packed zero point per output column:
    // bits/8 + (2 + bits/8) / group bytes per weight, what the checkpoint stores and the exllama
    // kernels read (Marlin skips the zero points of a symmetric GPTQ: 0.4 % fewer bytes at
    // int4/g128). GPTQ with desc_act (act-order) adds g_idx, one int32 per input row, which its
    // kernels read; without it they do not.
    auto bits = whole(q, method == "awq" ? "w_bit" : "bits", source);
    if (!bits) return std::unexpected(bits.error());
    if (!*bits && method == "awq") bits = whole(q, "bits", source);
    if (!bits) return std::unexpected(bits.error());
    auto group = whole(q, method == "awq" ? "q_group_size" : "group_size", source);
    if (!group) return std::unexpected(group.error());
    if (!*group && method == "awq") group = whole(q, "group_size", source);
    if (!group) return std::unexpected(group.error());
    if (!*bits || **bits <= 0 || **bits > 8) return std::unexpected(bad(source, method + " quantization_config needs bits in 1..8"));
    const double b = static_cast<double>(**bits) / 8.0;
    double per_weight = b;
    std::string name = fmt::format("{} int{}", method, **bits);
    if (*group && **group > 0) {
      per_weight += (2.0 + b) / static_cast<double>(**group);
      name += fmt::format(", group {}", **group);
    } else {
      // group_size -1: one scale and zero point per output column (per K rows): negligible.
      name += ", per-column scales";
    }
    s.linear = WeightFormat{name, per_weight, 0};
    if (method == "gptq" && flag(q, "desc_act", false)) {
      s.linear.index_bytes_per_row = 4;
      s.linear.name += ", act-order g_idx";
    }
    if (flag(q, "lm_head", false)) s.lm_head = s.linear;
    return {};
  }
  if (method == "fp8" || method == "fbgemm_fp8") {
    // One byte per weight. Per-tensor or per-channel scales are negligible; block-wise scales
    // (weight_block_size, as DeepSeek-V3's) are one float32 per block.
    double per_weight = 1.0;
    std::string name = "fp8";
    dom::array block;
    if (auto e = field(q, "weight_block_size"); e && e->get_array().get(block) == simdjson::SUCCESS && block.size() == 2) {
      std::int64_t bk = 0, bn = 0;
      if (block.at(0).get_int64().get(bk) == simdjson::SUCCESS && block.at(1).get_int64().get(bn) == simdjson::SUCCESS &&
          bk > 0 && bn > 0) {
        per_weight += 4.0 / static_cast<double>(bk * bn);
        name += fmt::format(", {}x{} block scales", bk, bn);
      }
    }
    s.linear = WeightFormat{name, per_weight, 0};
    // vLLM's fp8 leaves lm_head unquantized (ignored_layers / modules_to_not_convert name it).
    return {};
  }
  return std::unexpected(bad(source, fmt::format("quantization method '{}' is not modelled (gptq, awq, fp8 and "
                                                 "fbgemm_fp8 are); its weight bytes would be wrong",
                                                 method.empty() ? "(none given)" : method)));
}

// Which layers have the MoE FFN: Qwen2/3-MoE's decoder_sparse_step and mlp_only_layers,
// DeepSeek's first_k_dense_replace and moe_layer_freq, Llama-4's interleave_moe_layer_step;
// every layer otherwise (Mixtral).
Result<void> read_moe_layers(dom::object o, ModelShape& s, const std::string& source) {
  s.moe_layer.assign(static_cast<std::size_t>(s.layers), s.experts > 0);
  if (s.experts == 0) return {};
  auto step = whole(o, "decoder_sparse_step", source);
  if (!step) return std::unexpected(step.error());
  auto interleave = whole(o, "interleave_moe_layer_step", source);
  if (!interleave) return std::unexpected(interleave.error());
  auto first_dense = whole(o, "first_k_dense_replace", source);
  if (!first_dense) return std::unexpected(first_dense.error());
  auto freq = whole(o, "moe_layer_freq", source);
  if (!freq) return std::unexpected(freq.error());
  for (std::int64_t l = 0; l < s.layers; ++l) {
    bool moe = true;
    if (*step && **step > 0) moe = (l + 1) % **step == 0;
    if (*interleave && **interleave > 0) moe = (l + 1) % **interleave == 0;
    if (*first_dense && *freq && **freq > 0) moe = l >= **first_dense && l % **freq == 0;
    s.moe_layer[static_cast<std::size_t>(l)] = moe;
  }
  dom::array only;
  if (auto e = field(o, "mlp_only_layers"); e && e->get_array().get(only) == simdjson::SUCCESS) {
    for (auto v : only) {
      std::int64_t l = 0;
      if (v.get_int64().get(l) == simdjson::SUCCESS && l >= 0 && l < s.layers) s.moe_layer[static_cast<std::size_t>(l)] = false;
    }
  }
  return {};
}

// Sliding-window attention: `sliding_window` on every layer (Mistral-7B-v0.1), unless
// use_sliding_window is false (Qwen2 keeps the field but turns it off), or on the layers
// `layer_types` names sliding_attention.
Result<void> read_windows(dom::object o, ModelShape& s, const std::string& source) {
  s.window.assign(static_cast<std::size_t>(s.layers), 0);
  auto w = whole(o, "sliding_window", source);
  if (!w) return std::unexpected(w.error());
  dom::array types;
  const bool typed = [&] {
    auto e = field(o, "layer_types");
    return e && e->get_array().get(types) == simdjson::SUCCESS;
  }();
  if (typed) {
    if (types.size() != static_cast<std::size_t>(s.layers)) {
      return std::unexpected(bad(source, fmt::format("layer_types has {} entries for {} layers", types.size(), s.layers)));
    }
    std::size_t l = 0;
    for (auto t : types) {
      std::string_view name;
      if (t.get_string().get(name) != simdjson::SUCCESS) return std::unexpected(bad(source, "layer_types holds a non-string"));
      if (name == "sliding_attention") {
        if (!*w || **w <= 0) return std::unexpected(bad(source, "layer_types names sliding_attention but sliding_window is not set"));
        s.window[l] = **w;
      } else if (name != "full_attention") {
        return std::unexpected(bad(source, fmt::format("layer type '{}' is not modelled (full and sliding attention are)", name)));
      }
      ++l;
    }
    return {};
  }
  if (*w && **w > 0 && flag(o, "use_sliding_window", true)) s.window.assign(static_cast<std::size_t>(s.layers), **w);
  return {};
}

}  // namespace

Result<ModelShape> parse_model_config(std::string_view json, const std::string& source) {
  dom::parser parser;
  simdjson::padded_string padded(json);
  dom::element root;
  if (auto err = parser.parse(padded).get(root); err) {
    return std::unexpected(bad(source, std::string("not JSON (") + simdjson::error_message(err) + ")"));
  }
  dom::object o;
  if (root.get_object().get(o) != simdjson::SUCCESS) return std::unexpected(bad(source, "not a JSON object"));

  ModelShape s;
  s.model_type = text(o, "model_type");
  if (auto e = field(o, "architectures")) {
    dom::array a;
    std::string_view first;
    if (e->get_array().get(a) == simdjson::SUCCESS && a.size() > 0 && a.at(0).get_string().get(first) == simdjson::SUCCESS) {
      s.architecture = std::string(first);
    }
  }
  if (auto why = not_a_decoder(o, s.architecture); !why.empty()) {
    return std::unexpected(bad(source, why + "; kernscope models decoder-only LLMs"));
  }
  if (field(o, "kv_lora_rank") || field(o, "q_lora_rank")) {
    return std::unexpected(bad(source, "multi-head latent attention (kv_lora_rank) is not modelled"));
  }
  for (auto key : {"num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"}) {
    if (!field(o, key)) {
      return std::unexpected(bad(source, fmt::format("'{}' is missing: not a decoder LLM config kernscope can read "
                                                     "(it needs num_hidden_layers, hidden_size, num_attention_heads, "
                                                     "intermediate_size, vocab_size)",
                                                     key)));
    }
  }
  auto layers = positive(o, "num_hidden_layers", source);
  auto hidden = positive(o, "hidden_size", source);
  auto heads = positive(o, "num_attention_heads", source);
  auto vocab = positive(o, "vocab_size", source);
  for (auto* r : {&layers, &hidden, &heads, &vocab}) {
    if (!*r) return std::unexpected(r->error());
  }
  s.layers = *layers;
  s.hidden = *hidden;
  s.heads = *heads;
  s.vocab = *vocab;
  if (s.layers > 100000 || s.hidden > 10'000'000 || s.heads > 100000 || s.vocab > 100'000'000) {
    return std::unexpected(bad(source, "sizes out of any LLM's range"));
  }
  auto kv = whole(o, "num_key_value_heads", source);
  if (!kv) return std::unexpected(kv.error());
  s.kv_heads = kv->value_or(s.heads);  // absent: multi-head attention (LlamaConfig's default)
  if (s.kv_heads <= 0 || s.heads % s.kv_heads != 0) {
    return std::unexpected(bad(source, fmt::format("num_key_value_heads {} does not divide num_attention_heads {}", s.kv_heads, s.heads)));
  }
  auto head_dim = whole(o, "head_dim", source);
  if (!head_dim) return std::unexpected(head_dim.error());
  if (*head_dim && **head_dim > 0) {
    s.head_dim = **head_dim;
  } else {
    if (s.hidden % s.heads != 0) return std::unexpected(bad(source, "hidden_size is not a multiple of num_attention_heads and head_dim is not given"));
    s.head_dim = s.hidden / s.heads;
  }
  s.tied_embeddings = flag(o, "tie_word_embeddings", false);

  // Mixture of experts: the experts' count under any of the names transformers uses.
  for (auto key : {"num_experts", "num_local_experts", "n_routed_experts"}) {
    auto e = whole(o, key, source);
    if (!e) return std::unexpected(e.error());
    if (*e && **e > 0) {
      s.experts = **e;
      break;
    }
  }
  auto intermediate = whole(o, "intermediate_size", source);
  if (!intermediate) return std::unexpected(intermediate.error());
  if (!*intermediate || **intermediate <= 0) return std::unexpected(bad(source, "'intermediate_size' is missing"));
  s.intermediate = **intermediate;
  if (s.experts > 0) {
    auto k = whole(o, "num_experts_per_tok", source);
    if (!k) return std::unexpected(k.error());
    if (!*k || **k <= 0 || **k > s.experts) {
      return std::unexpected(bad(source, "num_experts_per_tok must be between 1 and the number of experts"));
    }
    s.experts_per_token = **k;
    auto moe_width = whole(o, "moe_intermediate_size", source);
    if (!moe_width) return std::unexpected(moe_width.error());
    s.expert_intermediate = moe_width->value_or(s.intermediate);  // Mixtral: the experts are intermediate_size wide
    auto shared_width = whole(o, "shared_expert_intermediate_size", source);
    if (!shared_width) return std::unexpected(shared_width.error());
    auto shared_count = whole(o, "n_shared_experts", source);
    if (!shared_count) return std::unexpected(shared_count.error());
    if (*shared_width && **shared_width > 0) {
      s.shared_intermediate = **shared_width;  // Qwen2-MoE: one shared expert of this width, with a gate
      s.shared_expert_gate = s.model_type == "qwen2_moe";
    } else if (*shared_count && **shared_count > 0) {
      s.shared_intermediate = **shared_count * s.expert_intermediate;  // DeepSeek: n experts' widths
    }
  }
  if (auto r = read_moe_layers(o, s, source); !r) return std::unexpected(r.error());
  if (auto r = read_windows(o, s, source); !r) return std::unexpected(r.error());

  s.qkv_bias = qkv_bias_by_type(s.model_type) || flag(o, "attention_bias", false);
  s.o_bias = flag(o, "attention_bias", false);
  s.mlp_bias = flag(o, "mlp_bias", false);
  s.qk_norm = qk_norm_by_type(s.model_type);
  if (!s.model_type.empty() && !llama_layout(s.model_type)) {
    s.notes.push_back({"costed_as_llama", NoteSeverity::kInfo,
                       fmt::format("model_type '{}' is costed as a Llama-style decoder (gated FFN, RMSNorm, biases only "
                                   "where the config names them)",
                                   s.model_type)});
  }

  s.dtype = text(o, "torch_dtype");
  if (s.dtype.empty()) s.dtype = text(o, "dtype");
  if (s.dtype.empty()) {
    return std::unexpected(bad(source, "no torch_dtype (or dtype): the weights' element size is unknown"));
  }
  auto bytes = dtype_bytes(s.dtype);
  if (!bytes) return std::unexpected(bad(source, fmt::format("torch_dtype '{}' is not modelled", s.dtype)));
  s.activation_bytes = *bytes;
  if (auto r = read_quantization(o, s, source); !r) return std::unexpected(r.error());
  return s;
}

Result<ModelShape> read_model_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot open model config '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return make_error(ErrorCode::kIo, "cannot read model config '" + path + "'");
  return parse_model_config(buffer.str(), path);
}

}  // namespace kernscope
