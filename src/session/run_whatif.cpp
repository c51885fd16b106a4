// whatif: each step replayed with a change (graphs, no-sync, scale, overlap-copies, overlap-comm,
// host) and its time predicted against the traced one (whatif.hpp has the model).
#include <sstream>

#include "analyses/trace_context.hpp"
#include "analyses/whatif/whatif.hpp"
#include "render/json_writer.hpp"
#include "render/whatif_render.hpp"
#include "session/analysis_entry.hpp"
#include "session/whatif_options.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace whatif_runner {
namespace {

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;  // every column: the replay reads streams, correlations and copy sizes
  open.kernel_name_variants = false;
  return open;
}

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
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
  const WhatIfResult result = what_if(context, *steps, accounting, options);
  AnalysisOutput out;
  out.tables.push_back(whatif_groups_table(result));
  out.tables.push_back(whatif_steps_table(*steps, result));
  if (output.frames()) return out;
  const Format format = output.table_format();
  std::ostringstream text;
  if (format == Format::kJson) {
    JsonWriter json(0);
    write_whatif_json(json, result);
    text << json.finish();
  } else if (format == Format::kTable) {
    text << render_whatif_text(result);
  } else {
    render(text, out.tables[1], RenderOptions{format, output.time_unit});  // CSV/TSV: one row per step
  }
  out.text = text.str();
  return out;
}

}  // namespace
}  // namespace whatif_runner

const AnalysisEntry& whatif_entry() {
  using namespace whatif_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{.name = "whatif",
                   .summary = "Replay each step with a change (graphs, no-sync, scale, overlap-copies, overlap-comm, host) and predict its time",
                   .options = whatif_option_specs(),
                   .formats = {"table", "csv", "tsv", "json"},
                   .time_unit = true,
                   .filters = true,
                   .shape = ResultShape::kTables},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
