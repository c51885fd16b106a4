// An Nsight Compute export as a trace of its own, so `kernscope roofline --ncu FILE` (and every
// other analysis) reads an ncu CSV without a timeline: one kernel row per profiled launch, laid
// end to end in profiling order (ncu serializes and replays kernels: their gaps and overlap are
// not measured, and the trace says so), with ncu's names, launch dimensions, stream and device,
// and the device's properties from the raw page's device__attribute_* columns.
#pragma once

#include "kernscope/trace.hpp"
#include "readers/ncu/ncu_report.hpp"

namespace kernscope::readers::ncu {

Trace trace_from_ncu(const NcuReport& report);

}  // namespace kernscope::readers::ncu
