// Nsight Compute's kernels joined to a trace's: by the function's own name and invocation order
// (the n-th launch ncu profiled of a name is the n-th launch of that name in the trace, counting
// from the first), grid and block sizes breaking ties: a launch of the same name with other
// dimensions is passed over. ncu profiles a subset (kernel filters, launch skip/count), so trace
// kernels without an ncu row are normal; an ncu row without a trace kernel is reported.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernscope/notes.hpp"
#include "kernscope/trace.hpp"
#include "readers/ncu/ncu_report.hpp"

namespace kernscope::readers::ncu {

struct NcuJoin {
  std::vector<std::optional<RowIndex>> trace_row;  // per ncu kernel (report order)
  std::size_t matched = 0;
  std::vector<Note> notes;  // names whose counts or dimensions disagree
};

NcuJoin join_ncu_kernels(const NcuReport& report, const Trace& trace);

}  // namespace kernscope::readers::ncu
