// kernscope analyze: rule findings (nsys's six CUDA rules) with evidence and suggested actions.
#include <future>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kernscope/analyze.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render_findings.hpp"
#include "kernscope/steps.hpp"

namespace kernscope::cli {
namespace {

struct AnalyzeCliOptions {
  std::string trace;
  std::string format = "table";
  AnalyzeOptions rules;
};

int run_analyze(const AnalyzeCliOptions& o) {
  if (o.format != "table" && o.format != "json") {
    return fail(Error{ErrorCode::kInvalidArgument, "unknown format '" + o.format + "' (expected table or json)"});
  }
  auto options = validate(o.rules);
  if (!options) return fail(options.error());
  // Summary columns suffice for every rule (launch geometry and return values are not used).
  OpenOptions open_options;
  open_options.detail_kinds = kAllEventKinds & ~(bit(EventKind::kKernels) | bit(EventKind::kApiCalls));
  auto trace = open_trace(o.trace, open_options);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  // nsys's rules and the step analysis only read the trace: run them side by side.
  auto steps_job = std::async(std::launch::async, [&] { return analyze_steps(loaded, OpRuleSet::builtin(), {}); });
  auto findings = run_nsys_rules(loaded, *options);
  if (auto steps = steps_job.get()) {
    for (auto& f : run_llm_rules(loaded, *steps, *options)) findings.push_back(std::move(f));
  }
  if (o.format == "json") {
    std::cout << render_findings_json(findings);
  } else {
    for (const auto& f : findings) std::cout << render_finding_console(f, options->rows);
  }
  return 0;
}

}  // namespace

Command add_analyze(CLI::App& app) {
  auto o = std::make_shared<AnalyzeCliOptions>();
  auto* cmd = app.add_subcommand("analyze", "Rule findings like `nsys analyze` (pageable/sync copies, syncs, GPU gaps, low utilisation)");
  cmd->add_option("-f,--format", o->format, "table or json")->capture_default_str();
  cmd->add_option("--gap", o->rules.gap_ms, "gpu_gaps: minimum idle time in ms")->capture_default_str();
  cmd->add_option("--threshold", o->rules.utilization_threshold, "gpu_time_util: flag regions below this % in use")->capture_default_str();
  cmd->add_option("--chunks", o->rules.utilization_chunks, "gpu_time_util: chunks per device and process")->capture_default_str();
  cmd->add_option("--rows", o->rules.rows, "evidence rows per rule")->capture_default_str();
  cmd->add_option("trace", o->trace, "trace file")->required();
  return [o] { return run_analyze(*o); };
}

}  // namespace kernscope::cli
