// `kernscope report --format html`: the diagnosis as one self-contained page, with charts where
// people would rather look than read (steps over time, operation classes, kernel duration tails).
#pragma once

#include <string>

#include "analyses/diagnosis/diagnosis.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// `trace` is the trace `diagnosis` was made from: the kernel duration charts read its kernels.
std::string render_diagnosis_html(const Trace& trace, const Diagnosis& diagnosis);

}  // namespace kernscope
