// account: where each step's time goes, in exclusive categories that sum to the step's window.
#include <memory>

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

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto run_steps = steps_of_run(trace, o);
  if (!run_steps) return std::unexpected(run_steps.error());
  const StepAnalysis& steps = (*run_steps)->steps;
  auto accounting = std::make_shared<const StepAccounting>(account_steps(*(*run_steps)->context, steps));
  Document d;
  d.tables.push_back(step_accounting_table(steps, *accounting));  // csv/tsv: one row per step
  d.tables.push_back(accounting_groups_table(*accounting));
  d.json = [accounting](const std::vector<Table>& tables, const RenderOptions& options) {
    return render_accounting_json(tables, *accounting, options);
  };
  d.text = [accounting, method = steps.method](const std::vector<Table>& tables, const RenderOptions& options) {
    return render_accounting_text(tables, *accounting, method, options);
  };
  return d;
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
