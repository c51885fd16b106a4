// steps: prefill/decode phases and every step decomposed.
#include <memory>
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

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto run_steps = steps_of_run(trace, o);
  if (!run_steps) return std::unexpected(run_steps.error());
  std::shared_ptr<const StepsOfRun> of_run = std::move(*run_steps);
  const StepAnalysis& steps = of_run->steps;
  Document d;
  d.tables.push_back(steps_table(steps));  // csv/tsv/json: one row per step
  d.tables.push_back(step_groups_table(steps));
  // The tracer's cost (kernscope tracer traces), and with --correct-tracer-cost host times without
  // it where the estimate is sound: a column "Host Corrected" after "Wall".
  const TracerCostEstimate cost = estimate_tracer_cost(trace, &steps, builtin_tracer_cost_calibration());
  std::vector<std::string> cost_lines = tracer_cost_sentences(cost);
  if (o.flag("correct-tracer-cost")) {
    const StepCorrection correction = correct_step_times(steps, cost);
    if (correction.sound) {
      auto& table = d.tables[0];
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
    for (const auto& line : cost_lines) d.notes.push_back({"tracer_cost", NoteSeverity::kInfo, "tracer: " + line});  // stderr beside csv/json
  }
  d.text = [of_run, cost_lines](const std::vector<Table>& tables, const RenderOptions& options) {
    std::ostringstream text;
    render(text, tables[0], options);
    text << render_steps_summary(of_run->steps);
    for (const auto& line : cost_lines) text << "Tracer: " << line << '\n';
    return text.str();
  };
  return d;
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
