// What every reader fuzz target does with a trace it managed to read: every report, and every
// analysis of the registry in every format it writes (the diagnosis runs every other analysis:
// ops, steps, tail, nsys's rules, the LLM rules). export is left out: it writes a file.
#pragma once

#include "kernscope/analysis.hpp"
#include "kernscope/reports.hpp"

namespace kernscope::fuzz {

inline void exercise_trace(const Trace& trace) {
  for (const auto& name : report_names()) {
    auto request = parse_report(name);
    if (request) (void)run_report(trace, *request);
  }
  for (const auto& spec : analysis_specs()) {
    if (spec.name == "export") continue;
    for (const auto& format : spec.formats) {
      AnalysisRequest request;
      request.analysis = spec.name;
      request.format = format;
      (void)run_analysis(trace, request);
    }
  }
}

}  // namespace kernscope::fuzz
