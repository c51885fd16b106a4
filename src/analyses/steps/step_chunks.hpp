// How analyze_steps splits its passes over API calls and GPU operations into chunks of rows run on
// several threads, each adding to its own tallies, merged in step order afterwards (steps.cpp). The
// defaults are what every user gets; tests ask for small chunks and several of them, so the merge
// runs on a trace of a few dozen rows (with the defaults it needs 131,072 rows and a second core).
#pragma once

#include <cstddef>

#include "kernscope/error.hpp"
#include "kernscope/steps.hpp"

namespace kernscope {

class TraceContext;

struct StepChunking {
  // Rows a chunk holds at least: 64 k, so that the 1.5 M kernels of a 300 MB export take 16 cores
  // (these passes are on report's longest chain of analyses).
  std::size_t min_rows = std::size_t{1} << 16;
  std::size_t cores = 0;                        // chunks at most (0: one per hardware thread)
};

// analyze_steps (trace_context.hpp) with the chunking given; analyze_steps is this with StepChunking{}.
Result<StepAnalysis> analyze_steps_in_chunks(const TraceContext& context, const StepOptions& options, const StepChunking& chunking);

}  // namespace kernscope
