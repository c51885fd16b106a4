// What every reader fuzz target does with a trace it managed to read: every report; the diagnosis,
// which runs every other analysis (ops, steps, tail, nsys's rules, the LLM rules), rendered as text
// and JSON; and the registry's info and steps through the library path the front ends take. Each
// input must stay well under the smoke run's 10 s timeout under ASan, so each analysis runs once.
#pragma once

#include "kernscope/analysis.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "kernscope/reports.hpp"
#include "render/document_render.hpp"

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
  for (const char* analysis : {"info", "steps"}) {
    AnalysisRequest request;
    request.analysis = analysis;
    (void)run_analysis(trace, request);
  }
}

}  // namespace kernscope::fuzz
