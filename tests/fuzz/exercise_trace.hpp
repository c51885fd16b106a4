// What every reader fuzz target does with a trace it managed to read: every report, and the
// diagnosis, which runs every other analysis (ops, steps, tail, nsys's rules, the LLM rules).
#pragma once

#include "kernscope/diagnosis.hpp"
#include "kernscope/reports.hpp"

namespace kernscope::fuzz {

inline void exercise_trace(const Trace& trace) {
  for (const auto& name : report_names()) {
    auto request = parse_report(name);
    if (request) (void)run_report(trace, *request);
  }
  if (auto d = diagnose(trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{})) {
    (void)render_diagnosis_text(*d);
    (void)render_diagnosis_json(*d);
  }
}

}  // namespace kernscope::fuzz
