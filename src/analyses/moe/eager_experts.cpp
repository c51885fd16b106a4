#include "analyses/moe/eager_experts.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <tuple>

#include "analyses/work/shape_flops.hpp"

namespace kernscope::moe {
namespace {

std::int64_t integer_text(const std::string& s) {
  std::int64_t v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() ? v : -1;
}

}  // namespace

EagerExperts eager_experts(const Trace& trace) {
  EagerExperts out;
  const auto& o = trace.op_shapes;
  std::vector<RowIndex>& order = out.ops_by_thread;
  order.resize(o.size());
  for (RowIndex i = 0; i < o.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](RowIndex a, RowIndex b) {
    return std::tie(o.global_tid[a], o.start_ns[a]) < std::tie(o.global_tid[b], o.start_ns[b]);
  });
  std::unordered_map<StringId, std::optional<std::vector<shapes::ArgShape>>> dims_cache;
  auto dims_of = [&](RowIndex i) -> const std::optional<std::vector<shapes::ArgShape>>& {
    auto it = dims_cache.find(o.input_dims[i]);
    if (it == dims_cache.end()) it = dims_cache.emplace(o.input_dims[i], shapes::parse_arg_shapes(trace.strings.get(o.input_dims[i]))).first;
    return it->second;
  };
  // First pass: expert calls (select of expert e, then a linear with that weight), per thread.
  struct Pending {
    std::int64_t expert = -1, experts = 0;
    std::vector<std::int64_t> weight;
  };
  std::unordered_map<std::int64_t, Pending> pending;
  std::vector<std::tuple<std::int64_t, RowIndex, std::int64_t, std::int64_t>> calls;  // tid, linear row, expert, tokens
  for (const RowIndex i : order) {
    const std::string_view name = trace.strings.get(o.name[i]);
    if (name == "aten::select") {
      const auto& d = dims_of(i);
      if (!d || d->size() < 3 || (*d)[0].dims.size() != 3 || o.concrete_inputs[i] == kNoString) continue;
      const auto values = shapes::parse_string_list(trace.strings.get(o.concrete_inputs[i]));
      if (!values || values->size() < 3 || (*values)[1] != "0") continue;
      const std::int64_t e = integer_text((*values)[2]);
      const auto& w = (*d)[0].dims;
      if (e < 0 || e >= w[0]) continue;
      pending[o.global_tid[i]] = {e, w[0], {w[1], w[2]}};
    } else if (name == "aten::linear") {
      auto it = pending.find(o.global_tid[i]);
      if (it == pending.end() || it->second.expert < 0) continue;
      const auto& d = dims_of(i);
      if (!d || d->size() < 2 || (*d)[1].dims != it->second.weight || (*d)[0].dims.empty()) continue;
      std::int64_t tokens = 1;
      for (std::size_t k = 0; k + 1 < (*d)[0].dims.size(); ++k) tokens *= (*d)[0].dims[k];
      if (out.experts == 0) {
        out.experts = it->second.experts;
        out.hidden = (*d)[0].dims.back();
      }
      // One expert count per analysis (the first loop's): a loop over another number of experts (a
      // draft model's MoE beside the target's, layers of different widths) would index past the
      // per-expert tables, so its calls are left out.
      if (it->second.experts == out.experts) calls.emplace_back(o.global_tid[i], i, it->second.expert, tokens);
      it->second.expert = -1;
    }
  }
  if (calls.empty() || out.experts == 0) return out;
  // Second pass: router linears (weight [E, hidden]) start layer invocations on their thread.
  const std::vector<std::int64_t> router_weight = {out.experts, out.hidden};
  std::unordered_map<std::int64_t, std::int64_t> open_invocation;  // thread -> index
  std::size_t next_call = 0;
  std::sort(calls.begin(), calls.end(), [&](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), o.start_ns[std::get<1>(a)]) < std::tie(std::get<0>(b), o.start_ns[std::get<1>(b)]);
  });
  std::vector<std::vector<char>> seen;  // per invocation: experts already counted
  // A call joins its thread's open invocation (none: an expert call with no router before it).
  auto join = [&](const std::tuple<std::int64_t, RowIndex, std::int64_t, std::int64_t>& call) {
    const auto& [tid, row, expert, tokens] = call;
    auto inv = open_invocation.find(tid);
    if (inv == open_invocation.end()) return;
    auto& counted = seen[static_cast<std::size_t>(inv->second)];
    const bool first = !counted[static_cast<std::size_t>(expert)];
    counted[static_cast<std::size_t>(expert)] = 1;
    out.calls.push_back({inv->second, expert, tokens, row, first});
  };
  for (const RowIndex i : order) {
    // Calls before this op (same order) join the thread's open invocation.
    while (next_call < calls.size() &&
           std::tie(std::get<0>(calls[next_call]), o.start_ns[std::get<1>(calls[next_call])]) < std::tie(o.global_tid[i], o.start_ns[i])) {
      join(calls[next_call++]);
    }
    if (trace.strings.get(o.name[i]) != "aten::linear") continue;
    const auto& d = dims_of(i);
    if (!d || d->size() < 2 || (*d)[1].dims != router_weight) continue;
    open_invocation[o.global_tid[i]] = static_cast<std::int64_t>(out.invocations.size());
    out.invocations.emplace_back(o.global_tid[i], i);
    out.router_ops.push_back(i);
    seen.emplace_back(static_cast<std::size_t>(out.experts), 0);
  }
  while (next_call < calls.size()) join(calls[next_call++]);
  return out;
}

std::vector<RowIndex> kernels_of_op(const Trace& trace, RowIndex op, const std::vector<RowIndex>& ops_by_thread,
                                    const std::unordered_map<std::int64_t, std::vector<RowIndex>>& kernels_by_external) {
  const auto& o = trace.op_shapes;
  std::vector<RowIndex> out;
  auto it = std::lower_bound(ops_by_thread.begin(), ops_by_thread.end(), op, [&](RowIndex a, RowIndex b) {
    return std::tie(o.global_tid[a], o.start_ns[a]) < std::tie(o.global_tid[b], o.start_ns[b]);
  });
  for (; it != ops_by_thread.end() && o.global_tid[*it] == o.global_tid[op] && o.start_ns[*it] <= o.end_ns[op]; ++it) {
    if (auto k = kernels_by_external.find(o.external_id[*it]); k != kernels_by_external.end() && o.external_id[*it] != 0) {
      out.insert(out.end(), k->second.begin(), k->second.end());
    }
  }
  return out;
}

std::unordered_map<std::int64_t, std::vector<RowIndex>> kernels_by_external_id(const Trace& trace) {
  const auto& k = trace.kernels;
  std::unordered_map<std::int64_t, std::vector<RowIndex>> out;
  for (RowIndex i = 0; i < k.size() && i < k.external_id.size(); ++i) {
    if (k.external_id[i] != 0) out[k.external_id[i]].push_back(i);
  }
  return out;
}

std::int64_t step_containing(const StepAnalysis& steps, std::int64_t thread, TimeNs t) {
  for (std::size_t s = 0; s < steps.steps.size(); ++s) {
    const Step& st = steps.steps[s];
    if ((st.global_tid == 0 || st.global_tid == thread) && t >= st.start_ns && t < st.end_ns) return static_cast<std::int64_t>(s);
  }
  return -1;
}

}  // namespace kernscope::moe
