// steps: prefill/decode phases and every step decomposed.
#include <sstream>

#include "kernscope/steps.hpp"
#include "render/steps_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
namespace {

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;
  open.detail_kinds = bit(EventKind::kMemcpy) | bit(EventKind::kMemset) | bit(EventKind::kNvtx);
  return open;
}

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  const StepOptions options = step_options_of(o);
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  auto steps = analyze_steps(trace, *rules, options);
  if (!steps) return std::unexpected(steps.error());
  AnalysisOutput out;
  out.tables.push_back(steps_table(*steps));
  out.tables.push_back(step_groups_table(*steps));
  if (output.frames()) return out;
  const Format format = output.table_format();
  std::ostringstream text;
  render(text, out.tables[0], RenderOptions{format, output.time_unit});
  if (format == Format::kTable) text << render_steps_summary(*steps);
  out.text = text.str();
  return out;
}

}  // namespace

const AnalysisEntry& steps_entry() {
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "steps",
          .summary = "Prefill/decode steps: wall, GPU busy/idle, launches, syncs; TTFT and TPOT distributions",
          .options = step_option_specs(),
          .formats = {"table", "csv", "tsv", "json"},
          .time_unit = true,
          .filters = true,
          .shape = ResultShape::kTables},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
