// moe: mixture-of-experts layers read from the trace: kernels by MoE role, layers in
// forward order, dispatch/combine and what of it no compute hides, tokens per expert where the
// trace shows them.
#include <cmath>
#include <memory>
#include <sstream>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/moe/perfect_router.hpp"
#include "analyses/trace_context.hpp"
#include "render/moe_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace moe_runner {
namespace {

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto run_steps = steps_of_run(trace, o);
  if (!run_steps) return std::unexpected(run_steps.error());
  const TraceContext& context = *(*run_steps)->context;
  const StepAnalysis& steps = (*run_steps)->steps;
  auto analysed = analyze_moe_with_router(context, steps, account_steps(context, steps));
  if (!analysed) return std::unexpected(analysed.error());
  auto moe = std::make_shared<const MoeAnalysis>(std::move(*analysed));
  Document d;
  d.tables.push_back(moe_roles_table(*moe));
  d.tables.push_back(moe_layers_table(*moe));
  d.tables.push_back(moe_expert_steps_table(*moe));
  // CSV/TSV: one row per step, layer and expert where the trace shows tokens per expert, else one per
  // layer; a trace without layers gives the header alone, so a reader still gets the columns.
  d.bare_tables = {d.tables[2].rows.empty() ? std::size_t{1} : std::size_t{2}};
  d.header_when_empty = true;
  d.json = [moe](const std::vector<Table>&, const RenderOptions&) { return render_moe_json(*moe); };
  d.text = [moe](const std::vector<Table>& tables, const RenderOptions& options) {
    // The answer to the question asked, on stdout like every other answer.
    if (!moe->present) return "No mixture-of-experts layers in this trace: " + moe->evidence + ".\n";
    // The per-step rows are the csv's; the text shows the roles and layers.
    std::ostringstream text;
    render(text, tables[0], options);
    render(text, tables[1], options);
    text << render_moe_text(*moe);
    return text.str();
  };
  return d;
}

}  // namespace
}  // namespace moe_runner

const AnalysisEntry& moe_entry() {
  using namespace moe_runner;
  static const AnalysisEntry entry{
      table_analysis("moe",
                     "Mixture-of-experts layers: kernels by role (expert GEMMs, router, permute, dispatch/combine), "
                              "layers in forward order, exposed dispatch/combine, tokens per expert where the trace shows them",
                     step_option_specs()),
      plan_details<kKernelDetails>, run};
  return entry;
}

}  // namespace kernscope::session
