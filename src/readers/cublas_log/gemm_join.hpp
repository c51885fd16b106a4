// cuBLAS/cuBLASLt log calls joined to a trace's GEMM kernels of the same run, by stream and order:
// the log's streams (per process) and the trace's streams holding GEMM kernels are paired in order
// of first use, then within a pair the n-th call is the n-th GEMM kernel. Counts that disagree are
// said, and then only the calls before the first surplus are paired. The caller says which trace
// kernels are GEMMs (cuBLAS's helper kernels, like split-K reductions, left out).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernscope/notes.hpp"
#include "kernscope/trace.hpp"
#include "readers/cublas_log/gemm_log.hpp"

namespace kernscope::readers::cublas_log {

struct GemmJoin {
  std::vector<std::optional<RowIndex>> trace_row;  // per log call
  std::size_t matched = 0;
  std::vector<Note> notes;
};

GemmJoin join_gemm_calls(const GemmLog& log, const Trace& trace, const std::vector<RowIndex>& gemm_rows);

}  // namespace kernscope::readers::cublas_log
