// The library layer both front ends call: every analysis kernscope runs on a trace (info, stats,
// tail, ops, analyze, steps, report, export) is one row of a registry with its options, the
// formats it writes and how its result is shaped. The CLI builds `kernscope NAME` from a row and
// Python builds `Trace.NAME()`, so adding an analysis is its runner file plus one registry row.
#pragma once

#include <memory>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/analysis_inputs.hpp"  // OptionSpec, OptionValues, TraceGroup
#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// How Python receives the result: DataFrames (one per table) or the JSON document as a dict.
enum class ResultShape { kTables, kDocument };

// The format name Python asks for when it wants the tables themselves, not a rendering.
inline constexpr std::string_view kFramesFormat = "frames";
// The format name Python asks for when it wants a document's values (AnalysisOutput::object), not its JSON text.
inline constexpr std::string_view kObjectFormat = "object";

struct JsonValue;  // render/json_writer.hpp

// Every member has a default (`= {}` included): the rows are designated initializers that leave
// members out, and GCC 12 warns (-Wmissing-field-initializers) for an omitted member without one.
struct AnalysisSpec {
  std::string name = {};
  std::string summary = {};               // one line: the CLI's help for the subcommand
  std::vector<OptionSpec> options = {};   // the analysis's own options
  std::vector<std::string> formats = {};  // accepted --format values; the first is the default
  bool time_unit = false;            // accepts --timeunit ns|us|ms|s
  bool filters = true;               // accepts --filter-time / --filter-nvtx (applied before it runs)
  ResultShape shape = ResultShape::kTables;
  std::string trace_help = "trace file";
  // How many traces it reads: 1 for the analyses of one trace; diff reads 2 (A and B), compare 2
  // or more (0: no upper bound). Each positional trace is one group of one run.
  std::size_t min_traces = 1, max_traces = 1;
  // Reads several traces, and one alone as an analysis of one trace does (whatif: a trace, or the
  // ranks of one run): Python has it as a Trace method as well as a module function.
  bool one_trace_too = false;
  // Reads each trace itself from its path, one at a time, keeping a digest (ranks: memory follows the
  // digests, not the traces); callers holding paths pass the paths (run_analysis over path groups)
  // rather than opened traces. Set by the registry from the analysis's entry.
  bool reads_paths = false;
  // Options that name a group of traces instead (diff's --a and --b: several runs of one side, so
  // the analysis sees the runs' own noise). Given, they replace the positional traces, one group each.
  std::vector<std::string> trace_group_options = {};
  // An option whose file is the trace when no trace is given (roofline's --ncu: an Nsight Compute
  // CSV opens as a trace of its profiled kernels); empty: the trace is required.
  std::string trace_option = {};
  // What the analysis lists instead of reading a trace, each behind a flag of that name, as nsys
  // does (stats --help-reports, analyze --help-rules): flag -> the list's text.
  std::vector<std::pair<std::string, std::string>> listings = {};
  bool reads_several_traces() const { return max_traces != 1; }
};

// The analyses, in the order the CLI lists them.
const std::vector<AnalysisSpec>& analysis_specs();
const AnalysisSpec* find_analysis(std::string_view name);

struct AnalysisRequest {
  std::string analysis;
  OptionValues options;
  std::string format;     // empty: the spec's default; kFramesFormat: tables only
  std::string time_unit;  // empty: ns
  std::string filter_time, filter_nvtx;
  bool partial = false;  // read traces cut short up to their last whole event (OpenOptions::partial)
};

struct AnalysisOutput {
  std::vector<Table> tables;          // the tabular results (empty for documents)
  std::string text;                   // the rendering in the requested format (empty for frames)
  std::vector<std::string> messages;  // notes for stderr ("SKIPPED ...", "wrote ...")
  std::shared_ptr<const JsonValue> summary;  // what an analysis that writes files did (export, -o FILE), for Python
  int exit_code = 0;                  // the verdict for the shell: 1 when a regression gate failed (diff --fail-if)
  std::shared_ptr<const JsonValue> object;  // kObjectFormat: the document's values
};

// Checks the request against the analysis's spec (options, format, time unit, filters).
Result<void> check_request(const AnalysisRequest& request);

// Reads `path` with only the event kinds the analysis needs and applies the request's filters.
Result<Trace> open_for_analysis(const std::string& path, const AnalysisRequest& request);

// Runs the analysis on a trace that open_for_analysis returned, or on a trace loaded with every
// event kind when `apply_filters` is set (Python's Trace: filters then act on a copy).
Result<AnalysisOutput> run_analysis(const Trace& trace, const AnalysisRequest& request, bool apply_filters = false);

// open_for_analysis and run_analysis in one call.
Result<AnalysisOutput> run_analysis(const std::string& path, const AnalysisRequest& request);

// --- analyses over several traces (diff, compare) ---------------------------------------------
// The groups of paths a multi-trace request names: the positional paths one group each, or the
// spec's trace-group options (all of them) when given. Checks the count against the spec.
Result<std::vector<std::vector<std::string>>> trace_path_groups(const AnalysisSpec& spec,
                                                                const std::vector<std::string>& positional,
                                                                const OptionValues& options);
// A file's name without folders and trace extensions (.sqlite, .gz, .json, .pt.trace, .nsys-rep).
std::string trace_label(const std::string& path);

// Runs a multi-trace analysis on loaded traces (`apply_filters`: the request's filters act on
// copies, as for Python's Trace).
Result<AnalysisOutput> run_analysis(const std::vector<TraceGroup>& groups, const AnalysisRequest& request,
                                    bool apply_filters = false);
// Opens every path with only what the analysis reads, filters each, then runs it.
Result<AnalysisOutput> run_analysis(const std::vector<std::vector<std::string>>& path_groups,
                                    const AnalysisRequest& request);

}  // namespace kernscope
