// kernscope report: one screen — what ran, where time goes, what is wrong, what to do next.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kernscope/diagnosis.hpp"
#include "kernscope/open.hpp"

namespace kernscope::cli {
namespace {

struct ReportCliOptions {
  std::string trace;
  std::string format = "text";
  std::string step_range;
};

int run_report_command(const ReportCliOptions& o) {
  if (o.format != "text" && o.format != "json") {
    return fail(Error{ErrorCode::kInvalidArgument, "unknown format '" + o.format + "' (expected text or json)"});
  }
  // Summary columns suffice for every rule (launch geometry and return values are not used).
  OpenOptions open_options;
  open_options.detail_kinds = kAllEventKinds & ~(bit(EventKind::kKernels) | bit(EventKind::kApiCalls));
  auto trace = open_trace(o.trace, open_options);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  StepOptions steps;
  if (!o.step_range.empty()) steps.step_range = o.step_range;
  auto d = diagnose(loaded, OpRuleSet::builtin(), steps, AnalyzeOptions{});
  if (!d) return fail(d.error());
  std::cout << (o.format == "json" ? render_diagnosis_json(*d) : render_diagnosis_text(*d));
  return 0;
}

}  // namespace

Command add_report(CLI::App& app) {
  auto o = std::make_shared<ReportCliOptions>();
  auto* cmd = app.add_subcommand("report", "One-screen diagnosis: phases, steps, classes, tails, findings, next actions");
  cmd->add_option("-f,--format", o->format, "text or json")->capture_default_str();
  cmd->add_option("--step-range", o->step_range, "NVTX range NAME[@DOMAIN] that marks one step");
  cmd->add_option("trace", o->trace, "trace file")->required();
  return [o] { return run_report_command(*o); };
}

}  // namespace kernscope::cli
