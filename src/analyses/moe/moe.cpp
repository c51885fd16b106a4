#include "analyses/moe/moe.hpp"

#include "analyses/moe/moe_modules.hpp"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyses/moe/eager_experts.hpp"
#include "base/pattern_table.hpp"

extern const char* const kernscope_builtin_moe_roles;

namespace kernscope {
namespace {

constexpr MoeRole kRoleOrder[kMoeRoles] = {MoeRole::kExpertGemm, MoeRole::kRouter, MoeRole::kPermute, MoeRole::kDispatchCombine,
                                           MoeRole::kOther};

std::optional<MoeRole> role_from_name(std::string_view name) {
  for (const MoeRole r : kRoleOrder) {
    if (moe_role_name(r) == name) return r;
  }
  return std::nullopt;
}

// Length of the union of [start, end) intervals, sorted by start.
std::int64_t union_length(std::vector<std::pair<TimeNs, TimeNs>>& v) {
  std::sort(v.begin(), v.end());
  std::int64_t total = 0;
  TimeNs open = 0, close = -1;
  for (const auto& [s, e] : v) {
    if (s > close) {
      if (close > open) total += close - open;
      open = s;
      close = e;
    } else {
      close = std::max(close, e);
    }
  }
  if (close > open) total += close - open;
  return total;
}

// The part of the union of `a` that no interval of `b` covers (both sorted and `b` merged here).
std::int64_t uncovered(std::vector<std::pair<TimeNs, TimeNs>> a, std::vector<std::pair<TimeNs, TimeNs>> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::pair<TimeNs, TimeNs>> merged;
  for (const auto& iv : b) {
    if (!merged.empty() && iv.first <= merged.back().second) merged.back().second = std::max(merged.back().second, iv.second);
    else merged.push_back(iv);
  }
  std::int64_t exposed = 0;
  std::size_t j = 0;
  TimeNs done = INT64_MIN;  // a's time up to here is counted
  for (const auto& [s0, e] : a) {
    TimeNs s = std::max(s0, done);
    if (s >= e) continue;
    while (j < merged.size() && merged[j].second <= s) ++j;
    for (std::size_t k = j; k < merged.size() && merged[k].first < e && s < e; ++k) {
      if (merged[k].first > s) exposed += merged[k].first - s;
      s = std::max(s, merged[k].second);
    }
    if (s < e) exposed += e - s;
    done = std::max(done, e);
  }
  return exposed;
}


}  // namespace

std::string_view moe_role_name(MoeRole role) {
  switch (role) {
    case MoeRole::kDispatchCombine: return "dispatch_combine";
    case MoeRole::kExpertGemm: return "expert_gemm";
    case MoeRole::kRouter: return "router";
    case MoeRole::kPermute: return "permute";
    case MoeRole::kOther: return "other";
  }
  return "other";
}

Result<MoeRoleRules> MoeRoleRules::parse(const std::string& text, const std::string& source) {
  MoeRoleRules rules;
  auto rows = read_pattern_rows(text, source, "ROLE");
  if (!rows) return std::unexpected(rows.error());
  for (const auto& row : *rows) {
    const auto role = role_from_name(row.name);
    if (!role) return make_error(ErrorCode::kInvalidArgument, row.where + ": unknown MoE role '" + row.name + "'");
    auto matcher = TextPattern::compile(row.pattern, {.ignore_case = true});
    if (!matcher) return make_error(ErrorCode::kInvalidArgument, row.where + ": invalid regular expression: " + matcher.error());
    rules.rules_.push_back({*role, std::move(*matcher)});
  }
  return rules;
}

const MoeRoleRules& MoeRoleRules::builtin() {
  static const MoeRoleRules rules = [] {
    auto parsed = parse(kernscope_builtin_moe_roles, "data/moe_roles.tsv");
    return parsed ? std::move(*parsed) : MoeRoleRules{};  // the built-in table is tested to parse
  }();
  return rules;
}

std::optional<MoeRole> MoeRoleRules::role_of(std::string_view name) const {
  for (const auto& rule : rules_) {
    if (rule.matcher.search(name)) return rule.role;
  }
  return std::nullopt;
}

namespace {

// The answer for a trace without MoE layers, with its kernels' time already in `out`.
MoeAnalysis not_present(MoeAnalysis& out, std::int64_t dispatch_kernels) {
  out.evidence = "no expert GEMM or router kernels by the names in data/moe_roles.tsv, nor MoE modules in Python stacks";
  if (dispatch_kernels > 0) {
    out.evidence += "; its " + std::to_string(dispatch_kernels) + " all-to-all/dispatch kernels alone do not make MoE layers";
  }
  return std::move(out);
}

}  // namespace

Result<MoeAnalysis> analyze_moe(const Trace& trace, const OpRuleSet& rules, const StepAnalysis& steps, const moe::EagerExperts& eager,
                                const MoeRoleRules& roles) {
  MoeAnalysis out;
  const auto& k = trace.kernels;
  // An eager per-expert loop under record_shapes names its experts and their tokens; the kernels
  // its expert and router linears launched take those roles whatever their names (plain GEMMs).
  std::vector<std::optional<MoeRole>> forced(k.size());
  std::vector<std::vector<RowIndex>> call_kernels(eager.calls.size()), router_kernels(eager.router_ops.size());
  if (!eager.calls.empty() && k.external_id.size() == k.size()) {
    const std::vector<RowIndex>& ops_by_thread = eager.ops_by_thread;
    const auto by_external = moe::kernels_by_external_id(trace);
    for (std::size_t c = 0; c < eager.calls.size(); ++c) {
      call_kernels[c] = moe::kernels_of_op(trace, eager.calls[c].op, ops_by_thread, by_external);
      for (const RowIndex i : call_kernels[c]) forced[i] = MoeRole::kExpertGemm;
    }
    for (std::size_t r = 0; r < eager.router_ops.size(); ++r) {
      router_kernels[r] = moe::kernels_of_op(trace, eager.router_ops[r], ops_by_thread, by_external);
      for (const RowIndex i : router_kernels[r]) forced[i] = MoeRole::kRouter;
    }
  }
  // Where kernel names say nothing, the model's own MoE modules may (profiler stacks: moe_modules.hpp).
  const moe::ModuleRoles modules = moe::module_roles(trace, rules);
  // Each distinct name is classified once, in slots by name id (the last: no name); a kernel costs
  // an index, not a hash lookup (a decode trace holds millions of kernels and a few hundred names).
  struct NameFacts {
    bool known = false;
    std::optional<MoeRole> role;
    bool communication = false;
  };
  std::vector<NameFacts> by_name(trace.strings.size() + 1);
  const auto facts_of = [&](StringId id) -> const NameFacts& {
    NameFacts& f = by_name[id == kNoString ? trace.strings.size() : id];
    if (!f.known) {
      const std::string_view name = trace.strings.get(id);
      f = {true, roles.role_of(name), rules.classify(name).first == "communication"};
    }
    return f;
  };
  // Most traces are of dense models: where no expert loop or MoE module forces a role, the names
  // alone decide, so each distinct name is looked at once (kernels counted by name first) and a
  // trace with no expert GEMM or router name is answered without a role per kernel.
  if (eager.calls.empty() && modules.role.empty()) {
    std::vector<std::int64_t> kernels_of_name(trace.strings.size() + 1, 0);
    std::int64_t kernel_ns = 0;
    for (RowIndex i = 0; i < k.size(); ++i) {
      const StringId id = k.shown_name(i);
      ++kernels_of_name[id == kNoString ? trace.strings.size() : id];
      kernel_ns += k.end_ns[i] - k.start_ns[i];
    }
    bool expert_or_router = false;
    std::int64_t dispatch = 0;
    for (std::size_t slot = 0; slot < kernels_of_name.size() && !expert_or_router; ++slot) {
      if (kernels_of_name[slot] == 0) continue;
      const NameFacts& facts = facts_of(slot == trace.strings.size() ? kNoString : static_cast<StringId>(slot));
      expert_or_router = facts.role == MoeRole::kExpertGemm || facts.role == MoeRole::kRouter;
      if (facts.role == MoeRole::kDispatchCombine) dispatch += kernels_of_name[slot];
    }
    if (!expert_or_router) {
      out.kernel_ns = kernel_ns;
      return not_present(out, dispatch);
    }
  }
  std::vector<std::optional<MoeRole>> role(k.size());
  std::vector<char> communication(k.size(), 0);
  std::int64_t per_role_ns[kMoeRoles] = {0, 0, 0, 0, 0}, per_role_count[kMoeRoles] = {0, 0, 0, 0, 0};
  std::map<StringId, std::int64_t> per_name_id[kMoeRoles];
  for (RowIndex i = 0; i < k.size(); ++i) {
    const StringId id = k.shown_name(i);
    const NameFacts& facts = facts_of(id);
    role[i] = forced[i] ? forced[i] : facts.role ? facts.role : modules.role_of(i);
    communication[i] = facts.communication;
    const std::int64_t ns = k.end_ns[i] - k.start_ns[i];
    out.kernel_ns += ns;
    if (!role[i]) continue;
    const auto r = static_cast<std::size_t>(*role[i]);
    per_role_ns[r] += ns;
    ++per_role_count[r];
    per_name_id[r][id] += ns;
  }
  std::map<std::string, std::int64_t> per_name[kMoeRoles];
  for (std::size_t r = 0; r < kMoeRoles; ++r) {
    for (const auto& [id, ns] : per_name_id[r]) per_name[r][std::string(trace.strings.get(id))] += ns;
  }
  const auto count = [&](MoeRole r) { return per_role_count[static_cast<std::size_t>(r)]; };
  out.present = count(MoeRole::kExpertGemm) > 0 || count(MoeRole::kRouter) > 0 || !eager.calls.empty();
  if (!out.present) return not_present(out, count(MoeRole::kDispatchCombine));
  std::size_t by_module = 0;
  for (RowIndex i = 0; i < k.size(); ++i) by_module += !forced[i] && !facts_of(k.shown_name(i)).role && modules.role_of(i).has_value();
  std::string module_classes;
  for (const auto& c : modules.classes) module_classes += (module_classes.empty() ? "" : ", ") + c;
  out.evidence = eager.calls.empty()
                     ? std::to_string(count(MoeRole::kExpertGemm)) + " expert GEMM and " + std::to_string(count(MoeRole::kRouter)) +
                           (by_module == 0 ? " router kernels by name (data/moe_roles.tsv)"
                                           : " router kernels: " + std::to_string(by_module) +
                                                 " of those and other kernels launched by the model's MoE modules (" + module_classes +
                                                 ", in the profiler's Python stacks), the rest by name (data/moe_roles.tsv)")
                     : std::to_string(eager.calls.size()) + " per-expert linears of " + std::to_string(eager.experts) +
                           " experts in record_shapes (an eager expert loop: aten::select of expert e's weights, then aten::linear)";
  for (const MoeRole r : kRoleOrder) {
    const auto i = static_cast<std::size_t>(r);
    if (per_role_count[i] == 0) continue;
    MoeRoleTotal t;
    t.role = r;
    t.kernels = per_role_count[i];
    t.ns = per_role_ns[i];
    t.share = out.kernel_ns > 0 ? static_cast<double>(t.ns) / static_cast<double>(out.kernel_ns) : 0;
    std::vector<std::pair<std::string, std::int64_t>> names(per_name[i].begin(), per_name[i].end());
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return std::tie(b.second, a.first) < std::tie(a.second, b.first); });
    if (names.size() > 5) names.resize(5);
    t.top_names = std::move(names);
    out.roles.push_back(std::move(t));
  }

  // Layers: within each step of each process and device, MoE kernels in start order; a router
  // invocation starts the next layer (the router runs once per MoE layer, before its experts).
  if (!eager.calls.empty()) {
    // Layer k of a step is the step's k-th router invocation on its thread.
    const auto& o = trace.op_shapes;
    std::vector<std::int64_t> layer_of(eager.invocations.size(), 0), step_of(eager.invocations.size(), -1);
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> next_layer;  // (thread, step) -> layer
    for (std::size_t v = 0; v < eager.invocations.size(); ++v) {
      const auto [tid, op] = eager.invocations[v];
      const std::int64_t step = moe::step_containing(steps, tid, o.start_ns[op]);
      layer_of[v] = next_layer[{tid, step}]++;
      step_of[v] = step;
    }
    std::map<std::int64_t, MoeLayer> layers;
    for (std::size_t v = 0; v < eager.invocations.size(); ++v) {
      MoeLayer& l = layers[layer_of[v]];
      l.layer = layer_of[v];
      ++l.invocations;
      if (l.experts.empty()) {
        for (std::int64_t e = 0; e < eager.experts; ++e) l.experts.push_back({e, 0, 0});
      }
      for (const RowIndex i : router_kernels[v]) l.ns[static_cast<std::size_t>(MoeRole::kRouter)] += k.end_ns[i] - k.start_ns[i];
    }
    // Per step, layer and expert (every expert listed, 0 where it got no tokens in that step).
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, MoeExpertStep> per_step;
    for (std::size_t v = 0; v < eager.invocations.size(); ++v) {
      for (std::int64_t e = 0; e < eager.experts; ++e) per_step[{step_of[v], layer_of[v], e}] = {step_of[v], layer_of[v], e, 0, 0};
    }
    for (std::size_t c = 0; c < eager.calls.size(); ++c) {
      const moe::ExpertCall& call = eager.calls[c];
      const auto v = static_cast<std::size_t>(call.layer_invocation);
      MoeLayer& l = layers[layer_of[v]];
      MoeExpert& e = l.experts[static_cast<std::size_t>(call.expert)];
      MoeExpertStep& row = per_step[{step_of[v], layer_of[v], call.expert}];
      if (call.first) {
        e.tokens += call.tokens;
        row.tokens += call.tokens;
      }
      for (const RowIndex i : call_kernels[c]) {
        e.time_ns += k.end_ns[i] - k.start_ns[i];
        row.time_ns += k.end_ns[i] - k.start_ns[i];
        l.ns[static_cast<std::size_t>(MoeRole::kExpertGemm)] += k.end_ns[i] - k.start_ns[i];
      }
    }
    for (auto& [key, row] : per_step) out.expert_steps.push_back(row);
    for (auto& [index, l] : layers) {
      std::int64_t total = 0, most = 0;
      for (const auto& e : l.experts) {
        total += e.tokens;
        most = std::max(most, e.tokens);
      }
      if (total > 0) l.imbalance = static_cast<double>(most) * static_cast<double>(l.experts.size()) / static_cast<double>(total);
      out.layers.push_back(std::move(l));
    }
    out.layers_from = "one router linear (weight [" + std::to_string(eager.experts) + ", " + std::to_string(eager.hidden) +
                      "]) starts a layer, counted in order within each step of each thread (record_shapes)";
  } else if (count(MoeRole::kRouter) == 0) {
    out.layers_from = "no router kernels: layers are not told apart (role totals only)";
  } else {
    out.layers_from = "one router invocation starts a layer, counted in launch order within each step of each process and device";
    std::map<std::tuple<std::int64_t, std::uint32_t, std::int32_t>, std::vector<RowIndex>> passes;
    for (RowIndex i = 0; i < k.size(); ++i) {
      if (!role[i]) continue;
      const std::int32_t step = i < steps.kernel_step.size() ? steps.kernel_step[i] : -1;
      passes[{k.global_pid[i], k.device_id[i], step}].push_back(i);
    }
    std::map<std::int64_t, MoeLayer> layers;
    for (auto& [key, rows] : passes) {
      std::stable_sort(rows.begin(), rows.end(), [&](RowIndex a, RowIndex b) { return k.start_ns[a] < k.start_ns[b]; });
      std::int64_t layer = -1;
      bool work_since_router = true;  // expert or dispatch work since the last router kernel
      for (const RowIndex i : rows) {
        // Router kernels with no expert work between them are one router (a router GEMM, then
        // its top-k or gate kernel) and start one layer.
        if (*role[i] == MoeRole::kRouter && work_since_router) {
          ++layer;
          MoeLayer& l = layers[layer];
          l.layer = layer;
          ++l.invocations;
          work_since_router = false;
        }
        work_since_router |= *role[i] == MoeRole::kExpertGemm || *role[i] == MoeRole::kDispatchCombine;
        // Kernels before a pass's first router (a dispatch of the layer before, in another step)
        // belong to no layer counted here.
        if (layer < 0) continue;
        layers[layer].ns[static_cast<std::size_t>(*role[i])] += k.end_ns[i] - k.start_ns[i];
      }
    }
    for (auto& [index, l] : layers) out.layers.push_back(std::move(l));
    // Layer k is the k-th router of a pass (a step of a process and device): that is the model's
    // layer k only when every pass runs the same layers (one forward pass per step).
    if (!out.layers.empty() && out.layers.back().invocations != out.layers.front().invocations) {
      out.notes.push_back({"moe_layer_counts_differ", NoteSeverity::kInfo,
                           "passes hold different numbers of MoE layers (layer 0 ran " + std::to_string(out.layers.front().invocations) +
                               " times, layer " + std::to_string(out.layers.back().layer) + " " +
                               std::to_string(out.layers.back().invocations) +
                               "): a layer number is a router's position in its step, not necessarily the model's layer (several "
                               "forward passes in a step, or no step annotations)"});
    }
  }

  // Dispatch/combine hidden by compute: per process and device, the time only communication runs.
  std::map<std::pair<std::int64_t, std::uint32_t>, std::pair<std::vector<std::pair<TimeNs, TimeNs>>, std::vector<std::pair<TimeNs, TimeNs>>>> by_device;
  for (RowIndex i = 0; i < k.size(); ++i) {
    auto& [dc, compute] = by_device[{k.global_pid[i], k.device_id[i]}];
    if (role[i] == MoeRole::kDispatchCombine) dc.emplace_back(k.start_ns[i], k.end_ns[i]);
    else if (!communication[i]) compute.emplace_back(k.start_ns[i], k.end_ns[i]);
  }
  for (auto& [device, lists] : by_device) {
    if (lists.first.empty()) continue;
    out.dispatch_combine_exposed_ns += uncovered(lists.first, lists.second);
    out.dispatch_combine_ns += union_length(lists.first);
  }

  // Tokens per expert: only per-expert shapes show them (an eager per-expert loop under
  // record_shapes); grouped/fused expert kernels and graph replays carry no such arguments.
  if (!eager.calls.empty()) {
    out.tokens_per_expert = "from record_shapes: each expert's first aten::linear per layer invocation (its tokens are the "
                            "rows of its input), the expert's index from the aten::select of its weights; experts that got "
                            "no tokens are listed with 0";
    return out;
  }
  std::int64_t graph_gemms = 0;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (role[i] == MoeRole::kExpertGemm && i < k.graph_id.size() && (k.graph_id[i] != 0 || k.graph_node_id[i] != 0)) ++graph_gemms;
  }
  out.tokens_per_expert = "not in this trace: its " + std::to_string(count(MoeRole::kExpertGemm)) +
                          " expert GEMM launches are grouped or fused kernels (all experts of a layer in one launch)" +
                          (graph_gemms > 0 ? std::string(", ") + std::to_string(graph_gemms) + " of them replayed from CUDA graphs," : ",") +
                          " whose per-expert token counts the trace does not record";
  out.perfect_router.why_not = "needs tokens per expert, which this trace does not show";
  return out;
}

const MoeLayer* most_skewed_layer(const MoeAnalysis& moe) {
  const MoeLayer* worst = nullptr;
  for (const auto& l : moe.layers) {
    if (l.imbalance && (!worst || *l.imbalance > *worst->imbalance)) worst = &l;
  }
  return worst;
}

Table moe_roles_table(const MoeAnalysis& moe) {
  Table t;
  t.report = "moe_roles";
  t.title = "Mixture-of-Experts Kernels by Role";
  t.columns = {{"Time", Unit::kPercent}, {"Total Time", Unit::kDuration}, {"Kernels"}, {"Role"}, {"Largest Names"}};
  for (const auto& r : moe.roles) {
    std::string names;
    for (const auto& [name, ns] : r.top_names) names += (names.empty() ? "" : "; ") + name;
    t.rows.push_back({std::round(r.share * 1000) / 10, r.ns, r.kernels, std::string(moe_role_name(r.role)), names});
  }
  return t;
}

Table moe_expert_steps_table(const MoeAnalysis& moe) {
  Table t;
  t.report = "moe_expert_steps";
  t.title = "Tokens per Expert per Step";
  t.columns = {{"Step"}, {"Layer"}, {"Expert"}, {"Tokens"}, {"Expert GEMM", Unit::kDuration}};
  for (const auto& r : moe.expert_steps) t.rows.push_back({r.step, r.layer, r.expert, r.tokens, r.time_ns});
  return t;
}

Table moe_layers_table(const MoeAnalysis& moe) {
  Table t;
  t.report = "moe_layers";
  t.title = "Mixture-of-Experts Layers (in forward order)";
  t.columns = {{"Layer"}, {"Invocations"}, {"Expert GEMM", Unit::kDuration}, {"Router", Unit::kDuration},
               {"Permute", Unit::kDuration}, {"Dispatch/Combine", Unit::kDuration}, {"Other", Unit::kDuration}};
  for (const auto& l : moe.layers) {
    auto ns = [&](MoeRole r) { return Cell{l.ns[static_cast<std::size_t>(r)]}; };
    t.rows.push_back({l.layer, l.invocations, ns(MoeRole::kExpertGemm), ns(MoeRole::kRouter), ns(MoeRole::kPermute),
                      ns(MoeRole::kDispatchCombine), ns(MoeRole::kOther)});
  }
  return t;
}

}  // namespace kernscope
