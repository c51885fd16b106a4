// The reduce of many traces' fleet digests (ranks_fleet_digest.hpp) into every cross-rank table:
// the digests' ranks numbered and analysed by the same functions `kernscope ranks` runs
// (assemble_rank_set, analyze_ranks: matching with window shifts, clock offsets and trust, skew,
// stragglers, hangs, bus bandwidth against the link peak), plus what only the fleet digest holds:
// kernel totals across traces, operation-class totals, and GPU utilisation from the busy bins on
// the aligned clocks. The digests may come from anywhere (a process pool or a Dask cluster writing
// Parquet, read back in python/kernscope/fleet/reduce.py): the reduce never needs a trace.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ranks/ranks_fleet_digest.hpp"
#include "ranks/ranks_skew.hpp"

namespace kernscope::ranks {

// One trace's digest and its number in the set (traces that could not be read leave gaps).
struct NumberedDigest {
  std::int64_t trace = 0;
  FleetDigest digest;
};

// Per operation class, over every trace.
struct ClassTotal {
  std::string op_class;
  std::int64_t kernels = 0, total_ns = 0;
  std::int64_t traces = 0;          // traces with kernels of the class
  double mean_per_trace_ns = 0;     // total_ns / traces
};

// Per kernel name, over every trace (a trace's row is its KernelTotals).
struct KernelAcross {
  std::string name, op_class;
  std::int64_t traces = 0, count = 0, total_ns = 0;
  std::int64_t min_trace_total_ns = 0, max_trace_total_ns = 0;
  std::int64_t slowest_trace = -1;  // the trace with the highest total (the lower number on a tie)
  double median_p50_ns = 0, max_p99_ns = 0;
  std::int64_t max_ns = 0;
};

// One bin of the set's utilisation: each rank's busy bins on the reference's clock, numbered from the
// earliest aligned bin start in steps of the bin width.
struct UtilizationBin {
  std::int64_t bin = 0, bin_ns = 0;
  std::int64_t ranks = 0;           // distinct ranks with a bin there
  double mean_busy = 0, min_busy = 0;  // busy share of the bin, over those ranks' bins
  std::int64_t least_busy_rank = -1;   // the lowest rank at min_busy
};

struct RankUtilization {
  std::int64_t rank = 0;
  double busy_share = 0;            // busy time / binned time
  double median_bin_busy = 0, min_bin_busy = 0;
  std::int64_t bins = 0;
};

struct FleetReduction {
  RankSet set;                      // numbered, by rank (ranks_set.hpp)
  // Per entry of set.ranks: the trace it came from and its position within that trace's digest.
  std::vector<std::pair<std::int64_t, std::size_t>> origin;
  RanksAnalysis analysis;           // per entry of set.ranks, as `kernscope ranks` gives it
  std::vector<ClassTotal> classes;  // total time descending
  std::vector<KernelAcross> kernels;  // total time descending, then name
  std::vector<UtilizationBin> utilization;  // by bin
  std::vector<RankUtilization> rank_utilization;  // by rank
};

FleetReduction reduce_fleet(std::vector<NumberedDigest> traces, const SkewOptions& options = {});

}  // namespace kernscope::ranks
