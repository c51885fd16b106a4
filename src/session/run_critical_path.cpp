// critical-path: where each step's critical path runs (by category of the step accounting, by part
// and by operation), optionally after a change, and one step's path as a Perfetto trace with flows.
#include <fstream>
#include <sstream>

#include "render/json_writer.hpp"
#include "render/whatif_render.hpp"
#include "session/analysis_entry.hpp"
#include "session/whatif_options.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace critical_path_runner {
namespace {

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  const std::string perfetto = o.text("perfetto");
  auto replayed = replay_with_changes(trace, o, !perfetto.empty());
  if (!replayed) return std::unexpected(replayed.error());
  auto kept = std::make_shared<const ReplayedTrace>(std::move(*replayed));
  const WhatIfResult& result = kept->result;
  Document d;
  if (!perfetto.empty()) {
    std::ofstream file(perfetto, std::ios::binary);
    file << critical_path_perfetto(result);
    if (!file) return make_error(ErrorCode::kIo, perfetto + ": cannot write the Perfetto trace");
    d.messages.push_back("critical-path: one step's path (" + std::to_string(result.links.size()) + " links) written to " + perfetto +
                         " (open it in ui.perfetto.dev)");
  }
  d.tables.push_back(critical_path_table(result));
  d.json = [kept](const std::vector<Table>&, const RenderOptions&) {
    JsonWriter json(0);
    write_critical_path_json(json, kept->result);
    return json.finish();
  };
  d.text = [kept](const std::vector<Table>&, const RenderOptions&) { return render_critical_path_text(kept->result); };
  return d;
}

}  // namespace
}  // namespace critical_path_runner

const AnalysisEntry& critical_path_entry() {
  using namespace critical_path_runner;
  static const AnalysisEntry entry{
      table_analysis("critical-path",
                     "Where each step's critical path runs: by category, part and operation; --perfetto FILE for one step's path",
                     critical_path_option_specs()),
      replay_plan, run};
  return entry;
}

}  // namespace kernscope::session
