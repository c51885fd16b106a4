#include "analyses/moe/moe_modules.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "analyses/moe/moe.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "base/text_pattern.hpp"

namespace kernscope::moe {
namespace {

enum class ModuleKind { kNone, kRouter, kExperts };

// The class of "nn.Module: SwitchGate_3" is SwitchGate.
std::string_view module_class(std::string_view text) {
  constexpr std::string_view kModule = "nn.Module: ";
  if (!text.starts_with(kModule)) return {};
  text.remove_prefix(kModule.size());
  const auto underscore = text.rfind('_');
  if (underscore != std::string_view::npos && underscore + 1 < text.size() &&
      std::all_of(text.begin() + static_cast<std::ptrdiff_t>(underscore) + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    text = text.substr(0, underscore);
  }
  return text;
}

ModuleKind kind_of(std::string_view cls) {
  static const auto kRouter = TextPattern::literal(R"((Router|Gate|Gating)$)");
  static const auto kExperts = TextPattern::literal(R"((MoE|Moe|MixtureOfExperts|Experts?)(Block|Layer|MLP)?$)");
  if (cls.empty()) return ModuleKind::kNone;
  if (kRouter.search(cls)) return ModuleKind::kRouter;
  if (kExperts.search(cls)) return ModuleKind::kExperts;
  return ModuleKind::kNone;
}

}  // namespace

ModuleRoles module_roles(const Trace& trace, const OpRuleSet& rules) {
  ModuleRoles out;
  const auto& k = trace.kernels;
  // Per thread, the calls of router and expert modules (ranges nest: a router inside its block).
  std::map<std::int64_t, std::vector<std::pair<TimeNs, TimeNs>>> routers, experts;
  std::set<std::string> classes;
  const auto& n = trace.nvtx;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (n.domain_id[i] != kKinetoPythonDomain || n.text[i] == kNoString) continue;
    const std::string_view cls = module_class(trace.strings.get(n.text[i]));
    const ModuleKind kind = kind_of(cls);
    if (kind == ModuleKind::kNone) continue;
    classes.emplace(cls);
    (kind == ModuleKind::kRouter ? routers : experts)[n.global_tid[i]].push_back({n.start_ns[i], n.end_ns[i]});
    ++(kind == ModuleKind::kRouter ? out.router_calls : out.expert_calls);
  }
  if (experts.empty()) return out;  // a router alone is no mixture of experts
  out.role.assign(k.size(), std::nullopt);
  for (auto* calls : {&routers, &experts}) {
    for (auto& [tid, spans] : *calls) std::sort(spans.begin(), spans.end());
  }
  const auto inside = [](const std::vector<std::pair<TimeNs, TimeNs>>& spans, TimeNs t) {
    // The last call starting at or before t holds it, or an outer one that began earlier does.
    auto it = std::upper_bound(spans.begin(), spans.end(), std::pair<TimeNs, TimeNs>{t, std::numeric_limits<TimeNs>::max()});
    for (int looked = 0; it != spans.begin() && looked < 4; ++looked) {
      --it;
      if (it->second > t) return true;
    }
    return false;
  };
  const report::ApiLookup lookup(trace.api_calls);
  std::map<StringId, bool> gemm;  // by kernel name: a matrix multiply (its class)
  for (RowIndex i = 0; i < k.size(); ++i) {
    const auto call = lookup.find(k.global_pid[i], k.correlation_id[i]);
    if (!call) continue;
    const std::int64_t tid = trace.api_calls.global_tid[*call];
    const TimeNs at = trace.api_calls.start_ns[*call];
    if (auto r = routers.find(tid); r != routers.end() && inside(r->second, at)) {
      out.role[i] = MoeRole::kRouter;
      continue;
    }
    auto e = experts.find(tid);
    if (e == experts.end() || !inside(e->second, at)) continue;
    auto [g, fresh] = gemm.emplace(k.demangled_name[i], false);
    if (fresh) {
      const std::string c = rules.classify(trace.strings.get(k.demangled_name[i])).first;
      g->second = c == "gemm" || c == "gemv" || c == "moe_gemm" || c == "quantized_gemm";
    }
    out.role[i] = g->second ? MoeRole::kExpertGemm : MoeRole::kOther;
  }
  out.classes.assign(classes.begin(), classes.end());
  return out;
}

}  // namespace kernscope::moe
