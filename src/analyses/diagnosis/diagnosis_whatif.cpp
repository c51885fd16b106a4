#include "analyses/diagnosis/diagnosis_whatif.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kernscope {
namespace {

// The headline group: the last group of decode (TPOT), else of prefill (TTFT), else the group with
// most steps, of the leading process; its steps in start order.
std::vector<std::size_t> headline_steps(const StepAnalysis& a, const StepAccounting& accounting, std::string& headline,
                                        std::int64_t& total) {
  std::vector<std::size_t> order;
  for (std::size_t s = 0; s < a.steps.size(); ++s) {
    if (accounting.process == 0 || a.steps[s].global_pid == accounting.process) order.push_back(s);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return a.steps[x].start_ns < a.steps[y].start_ns; });
  auto last_group_of = [&](Phase phase) -> const Step* {
    const Step* last = nullptr;
    for (const std::size_t s : order) {
      if (a.steps[s].phase == phase) last = &a.steps[s];
    }
    return last;
  };
  const Step* pick = last_group_of(Phase::kDecode);
  headline = "TPOT";
  if (!pick) {
    pick = last_group_of(Phase::kPrefill);
    headline = "TTFT";
  }
  if (!pick) {
    headline = "step time";
    std::map<std::pair<std::string, Phase>, std::size_t> count;
    for (const std::size_t s : order) ++count[{a.steps[s].group, a.steps[s].phase}];
    std::size_t most = 0;
    for (const std::size_t s : order) {
      if (count[{a.steps[s].group, a.steps[s].phase}] > most) {
        most = count[{a.steps[s].group, a.steps[s].phase}];
        pick = &a.steps[s];
      }
    }
  }
  std::vector<std::size_t> members;
  if (!pick) return members;
  for (const std::size_t s : order) {
    if (a.steps[s].group == pick->group && a.steps[s].phase == pick->phase) members.push_back(s);
  }
  total = static_cast<std::int64_t>(members.size());
  // The middle 64: enough for a median, and a replay window a 1 GB export can afford.
  constexpr std::size_t kMost = 64;
  if (members.size() > kMost) {
    const std::size_t from = (members.size() - kMost) / 2;
    members = std::vector<std::size_t>(members.begin() + static_cast<std::ptrdiff_t>(from),
                                       members.begin() + static_cast<std::ptrdiff_t>(from + kMost));
  }
  return members;
}

std::string fixed3(double ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", ms);
  return buffer;
}

}  // namespace

std::string PredictedChange::text() const {
  if (!ran) return {};
  const double t = static_cast<double>(traced_ns) / 1e6, p = static_cast<double>(predicted_ns) / 1e6;
  char change_pct[32];
  std::snprintf(change_pct, sizeof change_pct, "%+.1f %%", t > 0 ? 100.0 * (p - t) / t : 0.0);
  // overlap-comm's model is an upper bound (docs/whatif.md): said as one.
  const char* lead = change == "overlap-comm" ? "predicted at best: " : "predicted: ";
  return lead + headline + " " + fixed3(t) + " -> " + fixed3(p) + " ms (" + change_pct + ", " + source() + ")";
}

std::string PredictedChange::source() const {
  return "medians of " + std::to_string(steps) + " replayed steps of " + group + "; kernscope whatif --change " + change;
}

PredictedChange predict_change(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                               const std::string& change, std::shared_ptr<WhatIfGraphCache> graphs) {
  auto parsed = parse_whatif_change(change);
  if (!parsed) {
    PredictedChange out;
    out.change = change;
    return out;
  }
  parsed->text = change;
  return predict_change(context, steps, accounting, *parsed, std::move(graphs));
}

PredictedChange predict_change(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                               const WhatIfChange& change, std::shared_ptr<WhatIfGraphCache> graphs) {
  PredictedChange out;
  out.change = change.text;
  if (steps.steps.empty()) return out;
  WhatIfOptions options;
  options.paths = false;  // step times are all a prediction reads
  options.graphs = std::move(graphs);
  options.changes.push_back(change);
  options.only_steps = headline_steps(steps, accounting, out.headline, out.group_steps);
  if (options.only_steps.empty()) return out;
  const WhatIfResult r = what_if(context, steps, accounting, options);
  const Step& first = steps.steps[options.only_steps.front()];
  for (const auto& g : r.groups) {
    if (g.group != first.group || g.phase != first.phase) continue;
    out.ran = true;
    out.group = g.group;
    out.steps = g.steps;
    out.traced_ns = g.traced_step_ns;
    out.predicted_ns = g.predicted_step_ns;
  }
  return out;
}

}  // namespace kernscope
