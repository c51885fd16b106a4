// info: what the trace holds and what it lacks.
#include "analyses/steps/tracer_cost.hpp"
#include "analyses/overview.hpp"
#include "render/document_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace info_runner {
namespace {

Result<OpenOptions> plan(const Options&) { return OpenOptions{}; }

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto overview = std::make_shared<TraceOverview>(describe(trace));
  if (trace.source.format == "kernscope-tracer") {
    // The tracer's cost per step needs the steps (default step rules).
    auto rules = rules_with("");
    std::optional<StepAnalysis> steps;
    if (rules) {
      if (auto s = analyze_steps(trace, *rules, StepOptions{})) steps = std::move(*s);
    }
    const auto cost = estimate_tracer_cost(trace, steps ? &*steps : nullptr, builtin_tracer_cost_calibration());
    if (cost.kernscope_trace) overview->tracer_cost = cost;
  }
  Document d;
  d.json_document = [overview](JsonWriter& json) { write_overview_json(json, *overview); };
  d.text = [overview, all = o.flag("all")](const std::vector<Table>&, const RenderOptions&) { return render_overview_text(*overview, all); };
  return d;
}

}  // namespace
}  // namespace info_runner

const AnalysisEntry& info_entry() {
  using namespace info_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{.name = "info",
                   .summary = "What a trace holds: source, span, devices, counts, NVTX, what is missing",
                   .options = {{"all", 0, OptionKind::kFlag, "", "list every process, thread and NVTX range name"}},
                   .formats = {"text", "json"},
                   .time_unit = false,
                   .filters = false,
                   .shape = ResultShape::kDocument},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
