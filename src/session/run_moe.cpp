// moe: mixture-of-experts layers read from the trace: kernels by MoE role, layers in
// forward order, dispatch/combine and what of it no compute hides, tokens per expert where the
// trace shows them.
#include <cmath>
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

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  auto run_steps = steps_of_run(trace, o);
  if (!run_steps) return std::unexpected(run_steps.error());
  const TraceContext& context = *(*run_steps)->context;
  const StepAnalysis& steps = (*run_steps)->steps;
  auto moe = analyze_moe_with_router(context, steps, account_steps(context, steps));
  if (!moe) return std::unexpected(moe.error());
  AnalysisOutput out;
  out.tables.push_back(moe_roles_table(*moe));
  out.tables.push_back(moe_layers_table(*moe));
  out.tables.push_back(moe_expert_steps_table(*moe));
  if (output.frames()) return out;  // empty tables where the trace has no MoE layers
  const Format format = output.table_format();
  const RenderOptions render_options{format, output.time_unit};
  std::ostringstream text;
  if (!moe->present && format == Format::kTable) {
    // The answer to the question asked, on stdout like every other answer; csv/tsv give the header.
    text << "No mixture-of-experts layers in this trace: " << moe->evidence << ".\n";
  } else if (format == Format::kJson) {
    text << render_moe_json(*moe);
  } else if (format == Format::kTable) {
    // The per-step rows are the csv's; the text shows the roles and layers.
    render(text, out.tables[0], render_options);
    render(text, out.tables[1], render_options);
    text << render_moe_text(*moe);
  } else {
    // CSV/TSV: one row per step, layer and expert where the trace shows tokens per expert, else
    // one per layer; a trace without layers gives the header alone, so a reader still gets the columns.
    RenderOptions csv = render_options;
    csv.header_when_empty = true;
    render(text, out.tables[2].rows.empty() ? out.tables[1] : out.tables[2], csv);
  }
  out.text = text.str();
  return out;
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
