// kernscope export: a timeline for ui.perfetto.dev / chrome://tracing from any input trace.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kernscope/export.hpp"
#include "kernscope/open.hpp"

namespace kernscope::cli {
namespace {

struct ExportOptions {
  std::string trace;
  std::string format = "perfetto";
  std::string output;
};

int run_export(const ExportOptions& o) {
  auto format = parse_export_format(o.format);
  if (!format) return fail(format.error());
  auto trace = open_trace(o.trace);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  auto summary = export_trace_file(loaded, OpRuleSet::builtin(), o.output, *format);
  if (!summary) return fail(summary.error());
  std::cerr << "kernscope: wrote " << o.output << ": " << summary->events << " events, " << summary->flows
            << " launch flows";
  if (summary->overlap_tracks > 0) std::cerr << ", " << summary->overlap_tracks << " overlap tracks";
  std::cerr << "\n";
  return 0;
}

}  // namespace

Command add_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a timeline for ui.perfetto.dev or chrome://tracing (JSON, .gz to compress)");
  cmd->add_option("--format", o->format, "perfetto or chrome (the same trace-event JSON; both viewers open it)")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "output file (.json or .json.gz)")->required();
  cmd->add_option("trace", o->trace, "trace file")->required();
  return [o] { return run_export(*o); };
}

}  // namespace kernscope::cli
