// export: a timeline for ui.perfetto.dev / chrome://tracing from any input trace.
#include "export/export.hpp"
#include "render/json_writer.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace export_runner {
namespace {

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;
  open.thread_cpu = false;  // the exports carry the recorded events, not what is derived from them
  return open;
}

Result<Document> run(const Trace& trace, const Options& o, const Output& output) {
  auto format = parse_export_format(output.format);  // the format names what is written, not how it is shown
  if (!format) return std::unexpected(format.error());
  const std::string path = o.text("output");
  if (path.empty()) return make_error(ErrorCode::kInvalidArgument, "export: --output FILE is required");
  auto summary = export_trace_file(trace, OpRuleSet::builtin(), path, *format);
  if (!summary) return std::unexpected(summary.error());
  Document d;
  std::string message = "wrote " + path + ": " + std::to_string(summary->events) + " events, " +
                        std::to_string(summary->flows) + " launch flows";
  if (summary->overlap_tracks > 0) message += ", " + std::to_string(summary->overlap_tracks) + " overlap tracks";
  d.messages.push_back(message);
  // What was written, as a document (Python returns it as a dict).
  JsonWriter json = JsonWriter::tree();
  json.begin_object()
      .member("path", path)
      .member("events", summary->events)
      .member("flows", summary->flows)
      .member("overlap_tracks", summary->overlap_tracks)
      .end_object();
  d.summary = std::make_shared<const JsonValue>(json.take());
  return d;
}

}  // namespace
}  // namespace export_runner

const AnalysisEntry& export_entry() {
  using namespace export_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{.name = "export",
                   .summary = "Write a timeline for ui.perfetto.dev or chrome://tracing (JSON, .gz to compress)",
                   .options = {{"output", 'o', OptionKind::kText, "", "output file (.json or .json.gz)", true}},
                   .formats = {"perfetto", "chrome"},
                   .time_unit = false,
                   .filters = true,
                   .shape = ResultShape::kDocument},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
