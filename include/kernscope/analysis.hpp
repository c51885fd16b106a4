// The library layer both front ends call: every analysis kernscope runs on a trace (info, stats,
// tail, ops, analyze, steps, report, export) is one row of a registry with its options, the
// formats it writes and how its result is shaped. The CLI builds `kernscope NAME` from a row and
// Python builds `Trace.NAME()`, so adding an analysis is its runner file plus one registry row.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

enum class OptionKind {
  kText,     // one value
  kInteger,  // one whole number (checked when the request is parsed)
  kNumber,   // one real number
  kFlag,     // present or not
  kList,     // repeatable
};

struct OptionSpec {
  std::string name;        // "--name" on the command line, name= in Python
  char short_name = 0;     // "-x", 0 for none
  OptionKind kind = OptionKind::kText;
  std::string default_value;
  std::string help;
  bool required = false;
};

// How Python receives the result: DataFrames (one per table) or the JSON document as a dict.
enum class ResultShape { kTables, kDocument };

// The format name Python asks for when it wants the tables themselves, not a rendering.
inline constexpr std::string_view kFramesFormat = "frames";

struct AnalysisSpec {
  std::string name;
  std::string summary;               // one line: the CLI's help for the subcommand
  std::vector<OptionSpec> options;   // the analysis's own options
  std::vector<std::string> formats;  // accepted --format values; the first is the default
  bool time_unit = false;            // accepts --timeunit ns|us|ms|s
  bool filters = true;               // accepts --filter-time / --filter-nvtx (applied before it runs)
  ResultShape shape = ResultShape::kTables;
  std::string trace_help = "trace file";
};

// The analyses, in the order the CLI lists them.
const std::vector<AnalysisSpec>& analysis_specs();
const AnalysisSpec* find_analysis(std::string_view name);

// Option values as given (strings), checked against the spec by run_analysis.
using OptionValues = std::map<std::string, std::vector<std::string>>;

struct AnalysisRequest {
  std::string analysis;
  OptionValues options;
  std::string format;     // empty: the spec's default; kFramesFormat: tables only
  std::string time_unit;  // empty: ns
  std::string filter_time, filter_nvtx;
};

struct AnalysisOutput {
  std::vector<Table> tables;          // the tabular results (empty for documents)
  std::string text;                   // the rendering in the requested format (empty for frames)
  std::vector<std::string> messages;  // notes for stderr ("SKIPPED ...", "wrote ...")
  std::string summary_json;           // what an analysis that writes files did (export), for Python
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

}  // namespace kernscope
