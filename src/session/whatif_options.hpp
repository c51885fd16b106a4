// The options of whatif and critical-path: --change (repeatable) on top of the step options.
#pragma once

#include <vector>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/work/roofline.hpp"
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
                   "a change to replay (repeatable): graphs, no-sync[=CALL], scale=CLASS:FACTOR, roof=CLASS, overlap-copies, overlap-comm, "
                   "host=FACTOR"});
  return specs;
}

inline std::vector<OptionSpec> critical_path_option_specs() {
  auto specs = whatif_option_specs();
  specs.push_back({"perfetto", 0, OptionKind::kText, "", "write the steady group's middle step's path to FILE (Chrome trace JSON with flows)"});
  return specs;
}

// roof=CLASS: the class's kernels at their roofline time, as kernscope roofline --by class measures
// it (the class's ideal time over its time: every kernel of the class scaled by that share, so the
// class's total is its ideal). Needs a source of the kernels' work (recorded shapes, a model config).
inline Result<WhatIfChange> roof_change(const Trace& trace, const OpRuleSet& rules, const StepOptions& steps, const std::string& text,
                                        const std::string& op_class) {
  if (auto known = check_change_class(text, op_class); !known) return std::unexpected(known.error());
  RooflineOptions options;
  options.grouping = RooflineGrouping::kClass;
  options.rules = &rules;
  options.steps = steps;
  auto sol = roofline(trace, options);
  if (!sol) return make_error(ErrorCode::kNoData, "--change " + text + ": no roofline for this trace: " + sol.error().message);
  for (const auto& row : sol->rows) {
    if (row.name != op_class) continue;
    if (!row.has_work || row.time_ns <= 0) {
      return make_error(ErrorCode::kNoData, "--change " + text + ": the roofline knows no work of the " + op_class +
                                                " kernels (no recorded shapes or model config for them: see kernscope roofline)");
    }
    WhatIfChange c;
    c.kind = WhatIfChange::Kind::kScale;
    c.op_class = op_class;
    c.factor = std::min(1.0, row.ideal_ns / static_cast<double>(row.time_ns));
    c.text = text;
    return c;
  }
  return make_error(ErrorCode::kInvalidArgument, "--change " + text + ": no kernel of class " + op_class + " in this trace (kernscope ops lists them)");
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
