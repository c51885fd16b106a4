// The options of whatif and critical-path: --change (repeatable) on top of the step options.
#pragma once

#include <vector>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/whatif/roof_change.hpp"
#include "analyses/whatif/whatif.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {

// The load plan of a replay (whatif, critical-path): every column (the replay reads streams,
// correlations and copy sizes), but not kernels' short and mangled names.
inline Result<OpenOptions> replay_plan(const Options&) {
  OpenOptions open;
  open.kernel_name_variants = false;
  return open;
}

inline std::vector<OptionSpec> whatif_option_specs() {
  auto specs = step_option_specs();
  specs.push_back({"change", 'c', OptionKind::kList, "",
                   "a change to replay (repeatable): " + whatif_change_spellings()});
  return specs;
}

inline std::vector<OptionSpec> critical_path_option_specs() {
  auto specs = whatif_option_specs();
  specs.push_back({"perfetto", 0, OptionKind::kText, "", "write the steady group's middle step's path to FILE (Chrome trace JSON with flows)"});
  return specs;
}

inline Result<std::vector<WhatIfChange>> whatif_changes_of(const Options& o, const Trace& trace, const OpRuleSet& rules) {
  std::vector<WhatIfChange> changes;
  for (const auto& text : o.list("change")) {
    if (text.starts_with("roof=") && text.size() > 5) {
      auto c = roof_change(trace, rules, step_options_of(o), text, text.substr(5));
      if (!c) return std::unexpected(c.error());
      changes.push_back(*c);
      continue;
    }
    auto c = parse_whatif_change(text);
    if (!c) return std::unexpected(c.error());
    changes.push_back(*c);
  }
  return changes;
}

// One trace's steps, accounted and replayed with the options' --change list: what whatif and
// critical-path both start from.
struct ReplayedTrace {
  StepAnalysis steps;
  WhatIfResult result;
};

inline Result<ReplayedTrace> replay_with_changes(const Trace& trace, const Options& o, bool keep_links) {
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  auto changes = whatif_changes_of(o, trace, *rules);
  if (!changes) return std::unexpected(changes.error());
  const TraceContext context(trace, *rules);
  auto steps = analyze_steps(context, step_options_of(o));
  if (!steps) return std::unexpected(steps.error());
  const StepAccounting accounting = account_steps(context, *steps);
  WhatIfOptions options;
  options.changes = *changes;
  options.keep_links = keep_links;
  WhatIfResult result = what_if(context, *steps, accounting, options);
  return ReplayedTrace{std::move(*steps), std::move(result)};
}

}  // namespace kernscope::session
