// `kernscope report --format html`: the diagnosis as one self-contained page, with charts where
// people would rather look than read (steps over time, operation classes, kernel duration tails).
#pragma once

#include <string>

#include "analyses/diagnosis/diagnosis.hpp"
#include "analyses/diagnosis/report_page_data.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// Draws what the analyses computed (the diagnosis, and report_page_data's distributions and host
// profile); `trace` is the one they were made from, read only for the host frames' names.
std::string render_diagnosis_html(const Trace& trace, const Diagnosis& diagnosis, const ReportPageData& data);

}  // namespace kernscope
