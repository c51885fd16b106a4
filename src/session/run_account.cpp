// account: where each step's time goes, in exclusive categories that sum to the step's window.
#include <sstream>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/trace_context.hpp"
#include "render/accounting_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace account_runner {
namespace {

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  auto run_steps = steps_of_run(trace, o);
  if (!run_steps) return std::unexpected(run_steps.error());
  const StepAnalysis* steps = &(*run_steps)->steps;
  const StepAccounting accounting = account_steps(*(*run_steps)->context, *steps);
  AnalysisOutput out;
  out.tables.push_back(step_accounting_table(*steps, accounting));
  out.tables.push_back(accounting_groups_table(accounting));
  if (output.frames()) return out;
  const Format format = output.table_format();
  const RenderOptions render_options{format, output.time_unit};
  if (format == Format::kJson) {
    out.text = render_accounting_json(out.tables, accounting, render_options);
  } else if (format == Format::kTable) {
    out.text = render_accounting_text(out.tables, accounting, steps->method, render_options);
  } else {
    std::ostringstream text;
    render(text, out.tables[0], render_options);  // CSV/TSV: one row per step
    out.text = text.str();
  }
  return out;
}

}  // namespace
}  // namespace account_runner

const AnalysisEntry& account_entry() {
  using namespace account_runner;
  static const AnalysisEntry entry{
      table_analysis("account",
                     "Where each step's time goes: gpu, communication, copy, host, blocked, idle (sums to the step)",
                     step_option_specs()),
      plan_details<kStepDetails>, run};
  return entry;
}

}  // namespace kernscope::session
