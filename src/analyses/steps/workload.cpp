// Workload recognition. Evidence, in the order it is weighed:
//   training   — backward kernels (autograd's *_backward, cuDNN/cuBLAS wgrad/dgrad, flash *_bwd) or
//                optimizer kernels (multi_tensor_apply, fused Adam/SGD) taking real kernel time, or
//                annotations of autograd at work (a window of a training run may hold only forward
//                kernels: its emit_nvtx ranges still carry backward functions and sequence numbers);
//   inference  — convolutions (CNNs, the VAE of a diffusion/video model) without backward work, or
//                operators annotated by emit_nvtx none of which autograd recorded (no_grad);
//   LLM inference — attention (kernels, else the model's attention modules or PyTorch's attention
//                operator in the profiler's Python stacks) together with what only token generation has: rotary
//                embedding, KV-cache writes, token sampling (argmax/top-k/top-p), embedding lookups,
//                GEMV-shaped decode GEMMs, or step annotations that name prefill/decode;
//   benchmark  — a handful of distinct kernels and none of the above (kernel and HPC benchmarks);
//   unknown    — anything else.
#include <fmt/format.h>

#include <unordered_map>

#include "base/text_pattern.hpp"
#include "kernscope/steps.hpp"

namespace kernscope {
namespace {

std::int64_t sum_of(const std::map<std::string, std::int64_t>& class_ns, std::initializer_list<std::string_view> prefixes) {
  std::int64_t total = 0;
  for (const auto& [cls, ns] : class_ns) {
    for (auto p : prefixes) {
      if (std::string_view(cls).starts_with(p)) {
        total += ns;
        break;
      }
    }
  }
  return total;
}

std::string percent(std::int64_t part, std::int64_t whole) {
  return fmt::format("{:.1f} %", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
}

}  // namespace

std::string_view workload_name(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kLlmInference: return "llm_inference";
    case WorkloadKind::kTraining: return "training";
    case WorkloadKind::kInference: return "inference";
    case WorkloadKind::kBenchmark: return "benchmark";
    case WorkloadKind::kUnknown: break;
  }
  return "unknown";
}

Workload recognize_workload(const Trace& trace, const WorkloadSignals& signals) {
  Workload w;
  const auto& k = trace.kernels;
  std::int64_t total = 0;
  for (const auto& [cls, ns] : signals.class_ns) total += ns;
  if (k.size() == 0 && trace.graph_execs.size() == 0) {
    w.evidence.push_back("no GPU kernels in the trace");
    return w;
  }
  // Backward and optimizer kernels, by name (per distinct name, then weighted by time).
  static const auto kBackward = TextPattern::literal("backward|_bwd|bwd_|wgrad|dgrad|grad_input|grad_weight|col2im", {.ignore_case = true});
  static const auto kOptimizer = TextPattern::literal("multi_tensor_apply|adam|_sgd|sgd_|lamb_|fused_optimizer|optimizer", {.ignore_case = true});
  std::unordered_map<StringId, int> kind_of_name;  // 1 backward, 2 optimizer, 0 neither
  std::int64_t backward_ns = 0, optimizer_ns = 0;
  std::size_t distinct = 0;
  for (RowIndex i = 0; i < k.size(); ++i) {
    auto it = kind_of_name.find(k.demangled_name[i]);
    if (it == kind_of_name.end()) {
      const std::string_view name = trace.strings.get(k.demangled_name[i]);
      const int kind = kBackward.search(name) ? 1 : kOptimizer.search(name) ? 2 : 0;
      it = kind_of_name.emplace(k.demangled_name[i], kind).first;
      ++distinct;
    }
    if (it->second == 1) backward_ns += k.end_ns[i] - k.start_ns[i];
    if (it->second == 2) optimizer_ns += k.end_ns[i] - k.start_ns[i];
  }
  // Annotations of autograd at work: backward functions (MmBackward0, FSDP's
  // RegisterPostBackwardFunction), optimizer steps, or the sequence numbers emit_nvtx gives ops
  // recorded for backward (", seq = N": only with gradients enabled).
  static const auto kAutograd = TextPattern::literal(R"(Backward\d*\b|backward|[Oo]ptimizer\.step|, seq = \d+)");
  // emit_nvtx names every operator "NAME, op_id = N[, sizes = ...]" and adds ", seq = N" only to
  // those recorded with gradients on: many such ranges and none with a sequence number is a run
  // under no_grad/inference_mode.
  static const auto kOperatorRange = TextPattern::literal(R"(^[\w.:]+(, seq = \d+)?, op_id = \d+)");
  // Attention the model names where no attention kernel does (matmul, softmax and matmul as plain
  // kernels): its attention modules' calls in the profiler's Python stacks ("nn.Module:
  // LlamaAttention_0", a MultiheadAttention) or PyTorch's attention operator.
  static const auto kAttentionCall = TextPattern::literal(R"(^nn\.Module: \w*Attention(_\d+)?$|^aten::scaled_dot_product_attention$)");
  struct TextKind {
    bool autograd, operator_range, attention;
  };
  std::unordered_map<StringId, TextKind> text_kind;
  std::int64_t autograd_ranges = 0, operator_ranges = 0, attention_calls = 0;
  for (RowIndex i = 0; i < trace.nvtx.size(); ++i) {
    auto it = text_kind.find(trace.nvtx.text[i]);
    if (it == text_kind.end()) {
      const std::string_view text = trace.strings.get(trace.nvtx.text[i]);
      it = text_kind.emplace(trace.nvtx.text[i], TextKind{kAutograd.search(text), kOperatorRange.search(text), kAttentionCall.search(text)}).first;
    }
    autograd_ranges += it->second.autograd;
    operator_ranges += it->second.operator_range;
    attention_calls += it->second.attention;
  }
  backward_ns += sum_of(signals.class_ns, {"backward"});
  optimizer_ns += sum_of(signals.class_ns, {"optimizer"});
  if ((total > 0 && (20 * backward_ns >= total || (backward_ns > 0 && optimizer_ns > 0))) || autograd_ranges >= 10) {
    w.kind = WorkloadKind::kTraining;
    if (backward_ns > 0) w.evidence.push_back("backward kernels take " + percent(backward_ns, total) + " of kernel time");
    if (optimizer_ns > 0) w.evidence.push_back("optimizer kernels take " + percent(optimizer_ns, total));
    if (autograd_ranges > 0) {
      w.evidence.push_back(std::to_string(autograd_ranges) +
                           " annotations of autograd at work (backward functions, optimizer steps, ops recorded with "
                           "autograd sequence numbers)");
    }
    return w;
  }
  const std::int64_t conv = sum_of(signals.class_ns, {"convolution"});
  const std::int64_t attention = sum_of(signals.class_ns, {"attention", "splitkv_reduce"});
  const std::int64_t rope = sum_of(signals.class_ns, {"rope"});
  const std::int64_t kv = sum_of(signals.class_ns, {"kv_cache_write"});
  const std::int64_t sampling = sum_of(signals.class_ns, {"sampling"});
  const std::int64_t embedding = sum_of(signals.class_ns, {"embedding"});
  const std::int64_t gemv = sum_of(signals.class_ns, {"gemv", "attention_decode"});
  if (total > 0 && 100 * conv >= total) {
    w.kind = WorkloadKind::kInference;
    w.evidence.push_back("convolutions take " + percent(conv, total) + " of kernel time and no backward kernels ran");
    if (attention > 0) w.evidence.push_back("attention kernels take " + percent(attention, total) + " (a transformer beside the convolutions)");
    return w;
  }
  std::vector<std::string> llm;
  if (signals.annotated_phases) llm.push_back("step annotations name prefill/decode phases");
  if (rope > 0) llm.push_back("rotary-embedding kernels " + percent(rope, total));
  if (kv > 0) llm.push_back("KV-cache writes " + percent(kv, total));
  if (sampling > 0) llm.push_back("token sampling kernels " + percent(sampling, total));
  if (embedding > 0) llm.push_back("embedding lookups " + percent(embedding, total));
  if (gemv > 0) llm.push_back("GEMV-shaped (decode) kernels " + percent(gemv, total));
  if (((attention > 0 || attention_calls > 0) && !llm.empty()) || signals.annotated_phases) {
    w.kind = WorkloadKind::kLlmInference;
    if (attention > 0) w.evidence.push_back("attention kernels take " + percent(attention, total) + " of kernel time");
    if (attention == 0 && attention_calls > 0) {
      w.evidence.push_back(std::to_string(attention_calls) +
                           " attention module or operator calls in the profiler's Python stacks (its attention kernels are plain "
                           "GEMMs and softmax)");
    }
    for (auto& e : llm) w.evidence.push_back(std::move(e));
    w.evidence.push_back("no backward or optimizer kernels, no convolutions");
    return w;
  }
  if (operator_ranges >= 100 && autograd_ranges == 0 && backward_ns == 0 && optimizer_ns == 0) {
    w.kind = WorkloadKind::kInference;
    w.evidence.push_back(fmt::format("{} operator ranges (emit_nvtx) and none with an autograd sequence number: the "
                                     "model ran without gradients",
                                     operator_ranges));
    w.evidence.push_back("no backward or optimizer kernels; no attention with the marks of token generation "
                         "(rotary embedding, KV cache, sampling, decode GEMVs)");
    return w;
  }
  if (distinct <= 32 && attention == 0 && attention_calls == 0) {
    w.kind = WorkloadKind::kBenchmark;
    w.evidence.push_back(std::to_string(distinct) + " distinct kernels, no attention, backward or convolution kernels");
    return w;
  }
  w.evidence.push_back(fmt::format("{} distinct kernels; no evidence of LLM inference (attention with rotary embedding, "
                                   "KV-cache, sampling or decode GEMVs), training or convolutions",
                                   distinct));
  return w;
}

}  // namespace kernscope
