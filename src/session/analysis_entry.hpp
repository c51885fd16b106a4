// What one analysis contributes to the registry: its spec, what to read, and how to run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyses/trace_context.hpp"
#include "kernscope/analysis.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/render.hpp"
#include "kernscope/time_units.hpp"
#include "render/document.hpp"

namespace kernscope::session {

// An analysis's option values, checked against its spec (integers parse, names exist).
class Options {
 public:
  Options(const AnalysisSpec& spec, const OptionValues& values) : spec_(spec), values_(values) {}
  static Result<void> check(const AnalysisSpec& spec, const OptionValues& values);

  std::string text(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  bool flag(const std::string& name) const;
  std::vector<std::string> list(const std::string& name) const;

 private:
  const OptionSpec& spec_of(const std::string& name) const;
  const AnalysisSpec& spec_;
  const OptionValues& values_;
};

// What the caller asked to get back.
struct Output {
  std::string format;  // one of the spec's formats, or kFramesFormat
  TimeUnit time_unit = TimeUnit::kNs;
  bool frames() const { return format == kFramesFormat; }
};

// A load plan that reads every event kind, and only `Details`' every column (the analyses whose plan
// does not depend on their options).
template <EventKinds Details>
Result<OpenOptions> plan_details(const Options&) {
  OpenOptions open;
  open.detail_kinds = Details;
  return open;
}
// What finding and accounting steps read in full: copies, sets and ranges.
inline constexpr EventKinds kStepDetails = bit(EventKind::kMemcpy) | bit(EventKind::kMemset) | bit(EventKind::kNvtx);
// What reading kernels' roles reads in full: kernels (their grids, shapes) and ranges.
inline constexpr EventKinds kKernelDetails = bit(EventKind::kKernels) | bit(EventKind::kNvtx);

// The table formats (render.hpp lists them) and then the document's own (html, collapsed...): a spec's
// formats, so that a new table format reaches every analysis that writes tables.
inline std::vector<std::string> table_formats_and(std::vector<std::string> own, const std::string& first = "table") {
  std::vector<std::string> formats = table_format_names(first);
  formats.insert(formats.end(), own.begin(), own.end());
  return formats;
}

// The spec of an analysis of one trace that returns tables in the table formats (text first), with
// --timeunit and the filters: most analyses'. Those that differ change its fields or spell theirs whole.
AnalysisSpec table_analysis(std::string name, std::string summary, std::vector<OptionSpec> options);

// A runner declares (spec), plans what to read (plan) and computes (run): it returns a Document and
// never looks at the format, which render/document.hpp's writer picks (export alone reads it: the
// format names what it writes).
struct AnalysisEntry {
  AnalysisSpec spec;
  // The event kinds to read (OpenOptions::kinds / detail_kinds) for these options.
  Result<OpenOptions> (*plan)(const Options& options);
  Result<Document> (*run)(const Trace& trace, const Options& options, const Output& output);
  // Analyses over several traces (spec.max_traces != 1) have this instead of `run`.
  Result<Document> (*run_groups)(const std::vector<TraceGroup>& groups, const Options& options,
                                       const Output& output) = nullptr;
  // Optional, for analyses that keep only a digest of each trace (ranks): the paths themselves, so
  // that each trace is opened, digested and freed before the next (memory follows the digests, not
  // the traces). Given paths, the registry calls this rather than opening every trace for
  // run_groups; loaded traces (Python's) still go through run_groups. Such an analysis takes no filters.
  Result<Document> (*run_paths)(const std::vector<std::vector<std::string>>& path_groups, const Options& options,
                                      const Output& output) = nullptr;
};

// One per analysis, each in its own file (run_<name>.cpp).
const AnalysisEntry& info_entry();
const AnalysisEntry& stats_entry();
const AnalysisEntry& tail_entry();
const AnalysisEntry& ops_entry();
const AnalysisEntry& analyze_entry();
const AnalysisEntry& steps_entry();
const AnalysisEntry& account_entry();  // where each step's time goes
const AnalysisEntry& moe_entry();      // mixture-of-experts layers
const AnalysisEntry& spec_entry();     // speculative decoding
const AnalysisEntry& whatif_entry();   // each step replayed with a change
const AnalysisEntry& critical_path_entry();
const AnalysisEntry& report_entry();
const AnalysisEntry& export_entry();
const AnalysisEntry& roofline_entry();
const AnalysisEntry& host_entry();
const AnalysisEntry& diff_entry();     // two traces (or two groups of runs)
const AnalysisEntry& compare_entry();  // N traces side by side
const AnalysisEntry& ranks_entry();    // the traces of one distributed run, one per rank

// Every event kind, kernels and API calls with their summary columns only (launch geometry and
// return values are not used): what the rules and the diagnosis read.
Result<OpenOptions> summary_columns_plan(const Options& options);

// --step-range and --rules: the options of the analyses that find steps (steps, report).
std::vector<OptionSpec> step_option_specs();
StepOptions step_options_of(const Options& options);

// Reads --rules FILE on top of the built-in operation rules (shared by ops, steps, report).
Result<OpRuleSet> rules_with(const std::string& user_rules_path);

// What the analyses built on the steps start from: the --rules operation rules, the run's context
// over them, and the steps found with --step-range. One object, not moved, since the context
// borrows the rules.
struct StepsOfRun {
  StepsOfRun() = default;
  StepsOfRun(const StepsOfRun&) = delete;
  StepsOfRun& operator=(const StepsOfRun&) = delete;
  OpRuleSet rules;
  std::unique_ptr<TraceContext> context;
  StepAnalysis steps;
};
Result<std::unique_ptr<StepsOfRun>> steps_of_run(const Trace& trace, const Options& options);

}  // namespace kernscope::session
