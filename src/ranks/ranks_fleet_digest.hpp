// What the fleet tier (python/kernscope/fleet) keeps of one trace: its ranks' digests (collectives
// with their own-clock times, steps; ranks_set.hpp) plus the trace's kernel totals and tails with
// each kernel's operation class, and each rank's GPU busy time in fixed bins of its own clock. All
// of it is small next to the events, so a fleet of traces is reduced without holding any of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ranks/ranks_set.hpp"
#include "kernscope/error.hpp"

namespace kernscope::ranks {

struct KernelTotals {
  std::string name;      // demangled
  std::string op_class;  // data/op_rules.tsv's class
  std::int64_t count = 0, total_ns = 0, max_ns = 0;
  double mean_ns = 0, p50_ns = 0, p95_ns = 0, p99_ns = 0;
};

// One bin of a rank's GPU activity: the union of its kernels' intervals (any device of the rank)
// that falls in [start_ns, start_ns + bin_ns), on the rank's own clock.
struct BusyBin {
  TimeNs start_ns = 0;
  std::int64_t busy_ns = 0;
};

struct FleetDigest {
  std::vector<RankDigest> ranks;                // one per process with NCCL kernels, else one
  std::vector<KernelTotals> kernels;            // of the whole file, total time descending
  std::vector<std::vector<BusyBin>> busy;       // per entry of `ranks`; bins from its first kernel
  TimeNs bin_ns = 0;
};

// Reads `path` once (read_trace_digests) and reduces it. `bin_ns` > 0.
Result<FleetDigest> fleet_digest(const std::string& path, TimeNs bin_ns);

// The busy bins of the kernels of `trace` that belong to `global_pid` (-1: all), from `first_ns`.
std::vector<BusyBin> busy_bins(const Trace& trace, std::int64_t global_pid, TimeNs first_ns, TimeNs bin_ns);

}  // namespace kernscope::ranks
