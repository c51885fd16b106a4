// steps: prefill/decode phases and every step decomposed.
#include <sstream>

#include "analyses/steps/tracer_cost.hpp"
#include "render/tracer_cost_render.hpp"
#include "kernscope/steps.hpp"
#include "render/steps_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace steps_runner {
namespace {

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  auto run_steps = steps_of_run(trace, o);
  if (!run_steps) return std::unexpected(run_steps.error());
  const StepAnalysis* steps = &(*run_steps)->steps;
  AnalysisOutput out;
  out.tables.push_back(steps_table(*steps));
  out.tables.push_back(step_groups_table(*steps));
  // The tracer's cost (kernscope tracer traces), and with --correct-tracer-cost host times without
  // it where the estimate is sound: a column "Host Corrected" after "Wall".
  const TracerCostEstimate cost = estimate_tracer_cost(trace, &*steps, builtin_tracer_cost_calibration());
  std::vector<std::string> cost_lines = tracer_cost_sentences(cost);
  if (o.flag("correct-tracer-cost")) {
    const StepCorrection correction = correct_step_times(*steps, cost);
    if (correction.sound) {
      auto& table = out.tables[0];
      const auto at = static_cast<std::ptrdiff_t>(4);  // after Wall
      table.columns.insert(table.columns.begin() + at, Column{"Host Corrected", Unit::kDuration});
      for (std::size_t i = 0; i < table.rows.size(); ++i) {
        // emplace, not insert of a converted Cell: GCC 12 warns (maybe-uninitialized) on the temporary.
        table.rows[i].emplace(table.rows[i].begin() + at, std::in_place_type<std::int64_t>, correction.corrected_ns[i]);
      }
      cost_lines.push_back("Host Corrected: " + correction.why);
    } else {
      cost_lines.push_back("host times not corrected: " + correction.why);
    }
  }
  if (output.frames()) return out;
  const Format format = output.table_format();
  std::ostringstream text;
  render(text, out.tables[0], RenderOptions{format, output.time_unit});
  if (format == Format::kTable) {
    text << render_steps_summary(*steps);
    for (const auto& line : cost_lines) text << "Tracer: " << line << '\n';
  } else if (o.flag("correct-tracer-cost")) {
    for (const auto& line : cost_lines) out.messages.push_back("tracer: " + line);  // stderr beside csv/json
  }
  out.text = text.str();
  return out;
}

}  // namespace
}  // namespace steps_runner

const AnalysisEntry& steps_entry() {
  using namespace steps_runner;
  static const AnalysisEntry entry{
      table_analysis("steps",
                     "Prefill/decode steps: wall, GPU busy/idle, launches, syncs; TTFT and TPOT distributions",
                     [] {
            auto options = step_option_specs();
            options.push_back({"correct-tracer-cost", 0, OptionKind::kFlag, "",
                               "add a Host Corrected column: each step's wall less the tracer's estimated cost "
                               "(kernscope tracer traces with a calibration in data/tracer_cost.tsv; says when not sound)"});
            return options;
          }()),
      plan_details<kStepDetails>, run};
  return entry;
}

}  // namespace kernscope::session
