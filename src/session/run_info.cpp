// info: what the trace holds and what it lacks.
#include "kernscope/overview.hpp"
#include "render/document_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
namespace {

Result<OpenOptions> plan(const Options&) { return OpenOptions{}; }

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  const TraceOverview overview = describe(trace);
  AnalysisOutput out;
  out.text = output.format == "json" ? render_overview_json(overview) : render_overview_text(overview, o.flag("all"));
  return out;
}

}  // namespace

const AnalysisEntry& info_entry() {
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
