#include "analyses/steps/step_phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>

#include "analyses/work/shape_flops.hpp"
#include "base/text_pattern.hpp"

namespace kernscope::report {
namespace {

// Attention operators whose first argument is the query as [batch, heads, query tokens, head dim]
// (PyTorch's SDPA and the backends it dispatches to).
bool is_sdpa_op(std::string_view name) {
  return name == "aten::scaled_dot_product_attention" || name == "aten::_scaled_dot_product_flash_attention" ||
         name == "aten::_scaled_dot_product_efficient_attention" || name == "aten::_scaled_dot_product_cudnn_attention";
}

struct StepShapes {
  std::int64_t min_query = 0, max_query = 0;  // query tokens per sequence of the step's attention ops
  std::int64_t embedding_tokens = 0;          // token ids per sequence of the step's embedding lookups
  std::int64_t embedding_total = 0;           // token ids of its largest lookup, all sequences ([batch, tokens] or [tokens])
};

// Per step, the query lengths of its attention operators and the tokens its embedding looked up,
// from Kineto's record_shapes rows on the step's thread inside its window.
std::vector<StepShapes> shapes_per_step(const Trace& trace, const std::vector<Step>& steps,
                                        const std::vector<std::int64_t>& step_tid) {
  std::vector<StepShapes> out(steps.size());
  const auto& o = trace.op_shapes;
  if (o.size() == 0 || steps.empty()) return out;
  std::vector<std::size_t> order(steps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return steps[a].start_ns < steps[b].start_ns; });
  // 0: not wanted, 1: SDPA, 2: embedding; per operator name, decided once.
  std::unordered_map<StringId, int> kind_of;
  std::unordered_map<StringId, std::optional<std::vector<shapes::ArgShape>>> parsed;
  for (RowIndex i = 0; i < o.size(); ++i) {
    auto [kit, fresh] = kind_of.emplace(o.name[i], 0);
    if (fresh) {
      const std::string_view name = trace.strings.get(o.name[i]);
      kit->second = is_sdpa_op(name) ? 1 : name == "aten::embedding" ? 2 : 0;
    }
    if (kit->second == 0) continue;
    // The last step starting before the operator ends; it must also hold that end (and be of its
    // thread). The end, not the start: a forward-pass step starts at its embedding kernel's launch,
    // which lies inside the aten::embedding operator that recorded the token ids.
    const TimeNs at = std::max(o.start_ns[i], o.end_ns[i] - 1);
    auto it = std::upper_bound(order.begin(), order.end(), at,
                               [&](TimeNs t, std::size_t s) { return t < steps[s].start_ns; });
    if (it == order.begin()) continue;
    std::optional<std::size_t> step;
    for (auto back = it; back != order.begin();) {
      --back;
      const std::size_t s = *back;
      if (at >= steps[s].end_ns) {
        if (step_tid[s] == 0 || step_tid[s] == o.global_tid[i]) break;  // windows of one thread do not nest
        continue;
      }
      if (step_tid[s] == 0 || step_tid[s] == o.global_tid[i]) {
        step = s;
        break;
      }
    }
    if (!step) continue;
    auto [pit, pfresh] = parsed.emplace(o.input_dims[i], std::nullopt);
    if (pfresh) pit->second = shapes::parse_arg_shapes(trace.strings.get(o.input_dims[i]));
    if (!pit->second || pit->second->empty()) continue;
    const auto& first = (*pit->second)[0].dims;
    auto& sh = out[*step];
    if (kit->second == 1) {
      if (first.size() != 4) continue;  // [batch, heads, query, dim]
      const std::int64_t q = first[2];
      sh.min_query = sh.max_query == 0 ? q : std::min(sh.min_query, q);
      sh.max_query = std::max(sh.max_query, q);
    } else if (pit->second->size() >= 2) {
      const auto& ids = (*pit->second)[1].dims;  // aten::embedding(weight, indices, ...)
      if (ids.size() == 2) sh.embedding_tokens = std::max(sh.embedding_tokens, ids[1]);
      if (ids.size() == 1 || ids.size() == 2) sh.embedding_total = std::max(sh.embedding_total, ids.size() == 1 ? ids[0] : ids[0] * ids[1]);
    }
  }
  return out;
}

std::int64_t class_time(const Step& s, std::initializer_list<const char*> classes) {
  std::int64_t t = 0;
  for (const char* c : classes) {
    if (auto it = s.class_ns.find(c); it != s.class_ns.end()) t += it->second;
  }
  return t;
}

// The tokens an engine's step annotation states: vLLM's execute_<tokens>_context_..., else the query
// tokens of its context and generation requests ("(sq8155sk...)": sq is the query length).
std::int64_t annotated_tokens(std::string_view name) {
  static const auto kTotal = TextPattern::literal(R"(execute_(\d+)_context_\d+)");
  static const auto kQuery = TextPattern::literal(R"(_(?:context|generation)_\d+\(sq(\d+))");
  // Neither pattern can match without its literal text: most step names ("forward", "ProfilerStep#3")
  // skip the patterns (a step each; thousands on a long trace).
  if (name.find("execute_") == std::string_view::npos && name.find("(sq") == std::string_view::npos) return -1;
  if (auto m = kTotal.find(name)) return std::stoll(std::string(m->group(1)));
  std::int64_t total = -1;
  std::size_t at = 0;
  while (at < name.size()) {
    auto m = kQuery.find(name, at);
    if (!m) break;
    total = std::max<std::int64_t>(total, 0) + std::stoll(std::string(m->group(1)));
    at = m->end(0);
  }
  return total;
}

// Rule 5 of the header: per step, the phase its request's structure gives, or nullopt.
std::vector<std::optional<Phase>> phases_by_request(const std::vector<Step>& steps, const std::vector<StepPhaseFacts>& facts) {
  std::vector<std::optional<Phase>> out(steps.size());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (facts[i].request >= 0) order.push_back(i);
  }
  if (order.size() < 4) return out;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return steps[a].start_ns < steps[b].start_ns; });
  // A rare kernel: launched by at most a quarter of the passes (a prefill's own tiles; decodes
  // repeat one set of kernels).
  std::unordered_map<StringId, std::size_t> passes_launching;
  for (std::size_t i : order) {
    for (StringId n : facts[i].kernel_names) ++passes_launching[n];
  }
  const auto rare = [&](StringId n) { return 4 * passes_launching[n] <= order.size(); };
  // A request's first pass with rare kernels is its prefill; their names are the prefill's.
  std::vector<bool> first(steps.size(), false);
  std::vector<StringId> prefill_names;
  for (std::size_t j = 0; j < order.size(); ++j) {
    const std::size_t i = order[j];
    first[i] = j == 0 || facts[order[j - 1]].request != facts[i].request;
    if (!first[i]) continue;
    for (StringId n : facts[i].kernel_names) {
      if (rare(n)) prefill_names.push_back(n);
    }
  }
  if (prefill_names.empty()) return out;
  std::sort(prefill_names.begin(), prefill_names.end());
  // Any pass launching a prefill's own kernels is a prefill (a second prompt inside one request, as
  // a warm-up then measured run without a gap between them); the rest are decodes.
  for (std::size_t i : order) {
    const auto& names = facts[i].kernel_names;
    const bool prefill = std::any_of(names.begin(), names.end(), [&](StringId n) {
      return std::binary_search(prefill_names.begin(), prefill_names.end(), n);
    });
    out[i] = prefill ? Phase::kPrefill : Phase::kDecode;
  }
  return out;
}

}  // namespace

const char* phase_evidence_name(PhaseEvidence evidence) {
  switch (evidence) {
    case PhaseEvidence::kAnnotation: return "annotation";
    case PhaseEvidence::kShapes: return "shapes";
    case PhaseEvidence::kCacheWriteTokens: return "tokens (KV-cache write grids)";
    case PhaseEvidence::kAttentionKind: return "attention kernels";
    case PhaseEvidence::kRequestStructure: return "request structure (a request's first forward pass)";
    case PhaseEvidence::kKernelMix: return "kernel mix";
    case PhaseEvidence::kNone: break;
  }
  return "none";
}

PhaseDecisions decide_step_phases(const Trace& trace, std::vector<Step>& steps, const std::vector<StepPhaseFacts>& facts) {
  PhaseDecisions d;
  d.evidence.assign(steps.size(), PhaseEvidence::kNone);
  std::vector<std::int64_t> step_tid(steps.size(), 0);
  for (std::size_t i = 0; i < steps.size(); ++i) step_tid[i] = facts[i].global_tid;
  const auto shape = shapes_per_step(trace, steps, step_tid);
  const auto by_request = phases_by_request(steps, facts);
  std::map<std::int64_t, std::int64_t> query_seen;  // query lengths seen, for the summary
  // Rule 4's run: the fewest and most tokens a step's KV-cache writes show.
  std::int64_t fewest = 0, most = 0;
  for (const auto& f : facts) {
    if (f.cache_write_tokens <= 0) continue;
    fewest = fewest == 0 ? f.cache_write_tokens : std::min(fewest, f.cache_write_tokens);
    most = std::max(most, f.cache_write_tokens);
  }
  std::map<std::int64_t, std::int64_t> cache_tokens_seen;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    if (const auto annotated = annotated_tokens(s.name); annotated >= 0) {
      s.tokens = annotated;
    } else if (shape[i].embedding_total > 0) {
      s.tokens = shape[i].embedding_total;
    } else if (facts[i].cache_write_tokens > 0) {
      s.tokens = facts[i].cache_write_tokens;
    }
    if (s.phase != Phase::kUnknown) {
      d.evidence[i] = PhaseEvidence::kAnnotation;
      continue;
    }
    const auto& sh = shape[i];
    if (sh.max_query > 0 || sh.embedding_tokens > 0) {
      const std::int64_t lo = sh.max_query > 0 ? sh.min_query : sh.embedding_tokens;
      const std::int64_t hi = sh.max_query > 0 ? sh.max_query : sh.embedding_tokens;
      s.phase = hi > 1 ? (lo == 1 ? Phase::kMixed : Phase::kPrefill) : Phase::kDecode;
      d.evidence[i] = PhaseEvidence::kShapes;
      ++query_seen[hi];
      continue;
    }
    const std::int64_t prefill_attn = class_time(s, {"attention_prefill"});
    const std::int64_t decode_attn = class_time(s, {"attention_decode", "splitkv_reduce"});
    if (prefill_attn > 0 || decode_attn > 0) {
      s.phase = prefill_attn > 0 && decode_attn > 0 ? Phase::kMixed : prefill_attn > 0 ? Phase::kPrefill : Phase::kDecode;
      d.evidence[i] = PhaseEvidence::kAttentionKind;
      continue;
    }
    if (const std::int64_t t = facts[i].cache_write_tokens; t > 0 && (t == 1 || 8 * fewest <= most)) {
      s.phase = t == 1 || 8 * fewest > t ? Phase::kDecode : Phase::kPrefill;
      d.evidence[i] = PhaseEvidence::kCacheWriteTokens;
      ++cache_tokens_seen[t];
      continue;
    }
    if (const auto phase = by_request[i]) {
      s.phase = *phase;
      d.evidence[i] = PhaseEvidence::kRequestStructure;
      continue;
    }
    const std::int64_t gemm = class_time(s, {"gemm", "quantized_gemm", "moe_gemm"});
    const std::int64_t gemv = class_time(s, {"gemv"});
    if (gemm + gemv > 0) {
      s.phase = gemm > gemv ? Phase::kPrefill : Phase::kDecode;
      d.evidence[i] = PhaseEvidence::kKernelMix;
    }
  }
  // In words: how many steps of each phase, and which evidence decided how many.
  std::array<std::int64_t, 4> per_phase{};
  std::array<std::int64_t, 7> per_evidence{};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ++per_phase[static_cast<std::size_t>(steps[i].phase)];
    ++per_evidence[static_cast<std::size_t>(d.evidence[i])];
  }
  std::string phases;
  for (Phase p : {Phase::kPrefill, Phase::kDecode, Phase::kMixed, Phase::kUnknown}) {
    if (per_phase[static_cast<std::size_t>(p)] == 0) continue;
    phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", per_phase[static_cast<std::size_t>(p)], phase_name(p));
  }
  std::string from;
  for (std::size_t e = 0; e < per_evidence.size(); ++e) {
    if (per_evidence[e] == 0 || e == static_cast<std::size_t>(PhaseEvidence::kNone)) continue;
    std::string what = phase_evidence_name(static_cast<PhaseEvidence>(e));
    if (e == static_cast<std::size_t>(PhaseEvidence::kShapes)) {
      std::string q;
      for (auto it = query_seen.rbegin(); it != query_seen.rend(); ++it) q += (q.empty() ? "" : " / ") + std::to_string(it->first);
      what += " (query tokens per sequence " + q + ")";
    }
    if (e == static_cast<std::size_t>(PhaseEvidence::kCacheWriteTokens)) {
      what += fmt::format(": {} to {} tokens a step", cache_tokens_seen.begin()->first, cache_tokens_seen.rbegin()->first);
    }
    from += fmt::format("{}{} from {}", from.empty() ? "" : ", ", per_evidence[e], what);
  }
  if (!phases.empty()) d.summary = "phases: " + phases + (from.empty() ? "" : " (" + from + ")");
  return d;
}

}  // namespace kernscope::report
