#include "analyses/moe/perfect_router.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "analyses/whatif/whatif.hpp"

namespace kernscope {
namespace {

// One expert iteration of one layer invocation: its first linear's start (the anchor: every
// iteration runs the same ops before it) and the tokens it took.
struct Iteration {
  std::int64_t thread = 0;
  TimeNs start = 0;
  std::int64_t tokens = 0;
};

std::int64_t median_of(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// GPU time of the kernels launched by the thread's ops that start in [lo, hi).
std::int64_t gpu_ns_between(const Trace& trace, const moe::EagerExperts& eager,
                            const std::unordered_map<std::int64_t, std::vector<RowIndex>>& by_external, std::int64_t thread, TimeNs lo,
                            TimeNs hi) {
  const auto& o = trace.op_shapes;
  const auto& ops = eager.ops_by_thread;
  auto it = std::lower_bound(ops.begin(), ops.end(), std::make_pair(thread, lo), [&](RowIndex a, const std::pair<std::int64_t, TimeNs>& key) {
    return std::tie(o.global_tid[a], o.start_ns[a]) < std::tie(key.first, key.second);
  });
  std::set<RowIndex> kernels;
  for (; it != ops.end() && o.global_tid[*it] == thread && o.start_ns[*it] < hi; ++it) {
    if (o.external_id[*it] == 0) continue;
    if (auto k = by_external.find(o.external_id[*it]); k != by_external.end()) kernels.insert(k->second.begin(), k->second.end());
  }
  std::int64_t ns = 0;
  for (const RowIndex k : kernels) ns += trace.kernels.end_ns[k] - trace.kernels.start_ns[k];
  return ns;
}

std::string ms(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", static_cast<double>(ns) / 1e6);
  return text;
}

}  // namespace

PerfectRouter estimate_perfect_router(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                                      const moe::EagerExperts& eager) {
  PerfectRouter out;
  const Trace& trace = context.trace();
  const auto& o = trace.op_shapes;
  if (eager.calls.empty()) {
    out.why_not = "needs tokens per expert, which this trace does not show";
    return out;
  }
  // Iterations per invocation, in time order.
  std::vector<std::vector<Iteration>> by_invocation(eager.invocations.size());
  for (const auto& call : eager.calls) {
    if (!call.first) continue;
    by_invocation[static_cast<std::size_t>(call.layer_invocation)].push_back({o.global_tid[call.op], o.start_ns[call.op], call.tokens});
  }
  std::vector<std::int64_t> spacing;
  for (auto& list : by_invocation) {
    std::sort(list.begin(), list.end(), [](const Iteration& a, const Iteration& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < list.size(); ++i) spacing.push_back(list[i].start - list[i - 1].start);
  }
  if (spacing.empty()) {
    out.why_not = "no layer invocation ran two experts, so the cost of one expert iteration is not measured";
    return out;
  }
  out.host_per_iteration_ns = median_of(spacing);
  // GPU time per iteration: the kernels its thread launched until the next iteration (the last
  // one of an invocation: for one median spacing).
  const auto by_external = moe::kernels_by_external_id(trace);
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& list : by_invocation) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const TimeNs hi = i + 1 < list.size() ? list[i + 1].start : list[i].start + out.host_per_iteration_ns;
      const auto g = static_cast<double>(gpu_ns_between(trace, eager, by_external, list[i].thread, list[i].start, hi));
      const auto t = static_cast<double>(list[i].tokens);
      n += 1;
      sx += t;
      sy += g;
      sxx += t * t;
      sxy += t * g;
    }
  }
  out.iterations = static_cast<std::int64_t>(n);
  const double var = n * sxx - sx * sx;
  out.gpu_per_token_ns = var > 0 ? std::max(0.0, (n * sxy - sx * sy) / var) : 0.0;
  out.gpu_per_iteration_ns = std::max(0.0, (sy - out.gpu_per_token_ns * sx) / n);
  // Even routing, per invocation: T tokens over E experts run min(E, T) iterations; the per-token
  // part sums to the same T tokens, so only the count of iterations changes what it costs.
  WhatIfOptions options;
  options.paths = false;  // the groups' step times are all the estimate reads
  double hit = 0, even = 0;
  // Only invocations inside a step (a warm-up or prefill outside every step range is not replayed).
  for (const auto& list : by_invocation) {
    if (list.empty() || moe::step_containing(steps, list.front().thread, list.front().start) < 0) continue;
    std::int64_t tokens = 0;
    for (const auto& it : list) tokens += it.tokens;
    const std::int64_t iterations = std::min<std::int64_t>(eager.experts, tokens);
    const auto added = iterations - static_cast<std::int64_t>(list.size());
    hit += static_cast<double>(list.size());
    even += static_cast<double>(iterations);
    ++out.invocations;
    if (added == 0) continue;
    options.edits.push_back({list.back().thread, list.back().start, added * out.host_per_iteration_ns,
                             std::llround(static_cast<double>(added) * out.gpu_per_iteration_ns)});
  }
  if (out.invocations == 0) {
    out.why_not = "no layer invocation lies inside a step, so no step's time can be replayed";
    return out;
  }
  out.experts_hit = hit / static_cast<double>(out.invocations);
  out.experts_even = even / static_cast<double>(out.invocations);
  WhatIfOptions as_traced;
  as_traced.paths = false;
  const WhatIfResult traced = what_if(context, steps, accounting, as_traced);
  const WhatIfResult replayed = what_if(context, steps, accounting, options);
  // The steadiest group (the most steps) of the replay: its medians, traced and predicted.
  const WhatIfGroup* group = nullptr;
  for (const auto& g : replayed.groups) {
    if (!group || g.steps > group->steps) group = &g;
  }
  if (!group || group->traced_step_ns <= 0) {
    out.why_not = "the trace has no steps to replay";
    return out;
  }
  // The replay without a change gives back the traced times only where its graph is complete;
  // the saving is its prediction with the edits against its prediction without, so what the graph
  // misses cancels, and the step time shown is the trace's own.
  std::int64_t baseline = group->traced_step_ns;
  for (const auto& g : traced.groups) {
    if (g.group == group->group && g.phase == group->phase) baseline = g.predicted_step_ns;
  }
  out.notes = replayed.notes;
  out.estimated = true;
  out.group = group->group;
  out.step_ns = group->traced_step_ns;
  const double ratio = baseline > 0 ? static_cast<double>(group->predicted_step_ns) / static_cast<double>(baseline) : 1.0;
  out.predicted_step_ns = std::llround(static_cast<double>(out.step_ns) * ratio);
  out.saving_pct = std::round((1.0 - ratio) * 1000) / 10;
  char figures[256];
  std::snprintf(figures, sizeof figures, "%.1f %% (step %s -> %s; %.1f experts run per layer instead of %.1f, %s of host and %.3f ms of GPU per expert iteration)",
                out.saving_pct, ms(out.step_ns).c_str(), ms(out.predicted_step_ns).c_str(), out.experts_even, out.experts_hit,
                ms(out.host_per_iteration_ns).c_str(), out.gpu_per_iteration_ns / 1e6);
  // An eager loop runs its experts one after another, and every expert it hits has a token, so even
  // routing never runs fewer iterations and this estimate is never a saving: such a loop pays per
  // expert it runs, not for the busiest one. (Experts that run concurrently, in grouped kernels, are
  // where imbalance costs time; their tokens per expert are in no trace.)
  if (out.saving_pct > -0.05) {
    out.verdict = std::string("< 10 %: routing imbalance is not the bottleneck; a perfect router changes the step by ") + figures +
                  ": this loop runs every expert it hits already";
  } else {
    out.verdict = std::string("< 10 %: routing imbalance is not the bottleneck; even routing would be slower here, by ") +
                  std::string(figures).substr(1) + ": this loop runs its experts one after another and pays per expert it runs, "
                  "so spreading tokens only adds iterations";
  }
  return out;
}

Result<MoeAnalysis> analyze_moe_with_router(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting) {
  const moe::EagerExperts eager = moe::eager_experts(context.trace());
  auto moe = analyze_moe(context.trace(), context.rules(), steps, eager);
  if (moe && moe->present && !eager.calls.empty()) {
    moe->perfect_router = estimate_perfect_router(context, steps, accounting, eager);
    for (const auto& note : moe->perfect_router.notes) moe->notes.push_back(note_from("perfect-router replay: ", note));
  }
  return moe;
}

}  // namespace kernscope
