// Collectives matched across ranks, clocks aligned from them, and each collective's time split
// into waiting (for the last rank to arrive) and transfer (from the last arrival to the end).
//
// A rank "arrives" when its NCCL kernel starts: the kernel then spins until every peer's kernel has
// started, so the kernel's duration on an early rank is mostly waiting. All ranks' kernels end at
// nearly the same moment (the last chunk reaches everyone together), which is what the clock
// offsets are estimated from: per rank, the median of its end-time differences to a reference
// rank, with the median absolute deviation as the spread. Skew figures use the aligned times.
//
// Matching is by identity where the traces give it (communicator and sequence number), else by order
// within a communicator, with a shift (a whole number of collectives) where a rank's window starts
// elsewhere. A shift is taken only when it pairs calls of the same kind, size, dtype, algorithm and
// protocol whose ends line up: in one file as the clock reads; across files as the clocks read or
// after an offset fitted to the pairs (then on 8 pairs or more), and not where the run repeats itself
// (a shift by its period would line up as well). When no shift does, or several do alike, the
// matching is not trusted; neither are the clocks when the ends scatter. Then the straggler and hang
// verdicts are withheld (the figures stay, marked untrusted) and why is said first (`distrust`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernscope/notes.hpp"
#include "ranks/ranks_links.hpp"
#include "ranks/ranks_set.hpp"

namespace kernscope::ranks {

struct SkewOptions {
  bool estimate_clocks = true;  // false: trust the traces' clocks as they are
  int time_bins = 10;           // skew over time
  std::int64_t max_shift = 64;  // order fallback: how many collectives one rank's window may start later or earlier
};

struct ClockOffset {
  std::int64_t rank = 0;
  double offset_ns = 0;   // subtract from the rank's times to get the reference's clock
  double end_difference_ns = 0;  // median of (rank's end - reference's end) over common collectives
  double spread_ns = 0;   // median absolute deviation of the end differences
  bool shared_clock = false;  // in the reference's file: the same clock, so no offset is applied
  std::int64_t samples = 0;
  bool trusted = false;
  std::string why;        // when not trusted, or how it was taken
};

struct MatchedCollective {
  std::string group;
  std::int64_t seq = -1;    // the trace's sequence number, or -1 when matched by order
  std::int64_t index = 0;   // position within the group on the reference rank
  CollectiveKind kind = CollectiveKind::kOther;
  std::string algorithm, protocol, dtype;
  std::int64_t bytes = -1;
  std::int64_t group_size = 0;
  std::vector<std::size_t> ranks;      // positions in RankSet::ranks, of ranks where it ran
  std::vector<TimeNs> arrival, end;    // per entry of `ranks`, aligned
  std::vector<std::size_t> missing;    // positions of ranks where it did not run
  // Per entry of `missing`: "did not arrive", "its trace ends before", "its trace starts after", "no NCCL
  // kernels in its trace"; "missing within its window (untrusted: no verdict)" in place of "did not
  // arrive" while the verdicts are withheld.
  std::vector<std::string> missing_why;
  TimeNs first_arrival = 0, last_arrival = 0, end_ns = 0;  // aligned; end_ns: median end
  std::int64_t last_rank = -1;         // rank number of the last to arrive
  TimeNs lead_ns = 0;                  // last arrival - second-last arrival
  TimeNs spread_ns = 0;                // last arrival - first arrival
  TimeNs transfer_ns = 0;              // end - last arrival (>= 0)
  double mean_wait_ns = 0;             // over the ranks where it ran
  double algorithm_bandwidth = 0;      // bytes / transfer time (nccl-tests' algBW), 0 when unknown
  double bus_bandwidth = 0;            // algBW x the kind's factor (nccl-tests' busBW), 0 when unknown
  bool kinds_differ = false;           // ranks disagree on what it was (order matching went wrong?)
  std::int64_t step = -1;              // the reference rank's ProfilerStep#N, -1 none
  std::int64_t window = -1, layer = -1;  // the reference rank's own step index and position in it (ranks_steps.hpp)
};

// The straggler of a group of matched collectives (a step, a layer, a time bin): the rank whose late
// arrivals held the others longest, summing its lead over the second-last arrival where that lead is
// beyond the noise, with how often it was last. By lead, not by count: a rank 2 ms late once outweighs one
// a few microseconds late in every other collective (a delayed step's first all-reduce, then the rest
// in step). Ties go to the rank last more often, then the lower rank.
class StragglerTally {
 public:
  void add(const MatchedCollective& m, TimeNs noise_ns);
  // (rank, times last); (-1, 0) when no collective had a last rank beyond the noise.
  std::pair<std::int64_t, std::int64_t> top() const;

 private:
  std::map<std::int64_t, std::pair<TimeNs, std::int64_t>> by_rank_;  // rank -> (lead sum, times last)
};

struct StragglerRow {
  std::int64_t rank = 0;
  std::int64_t times_last = 0;      // collectives where it arrived last by more than the noise
  std::int64_t collectives = 0;     // matched collectives it took part in
  TimeNs total_lead_ns = 0;         // sum of its lead over the second-last
  TimeNs wait_caused_ns = 0;        // sum of the others' waits in those collectives
};

struct KindRow {
  CollectiveKind kind = CollectiveKind::kOther;
  std::int64_t count = 0;
  double wait_ns = 0;               // sum over collectives of the mean wait
  TimeNs transfer_ns = 0;
  double median_spread_ns = 0, median_transfer_ns = 0;
  double median_algorithm_bandwidth = 0;  // bytes/s, 0 when sizes are unknown
  double median_bus_bandwidth = 0;  // bytes/s, 0 when sizes are unknown
  double max_bus_bandwidth = 0;
  std::int64_t sized = 0;           // collectives whose size the traces give
  std::int64_t median_bytes = 0;
  std::int64_t bytes = 0;
};

struct RankRow {
  std::int64_t rank = 0;
  std::string evidence;
  std::string path;
  std::int64_t collectives = 0;
  TimeNs comm_ns = 0, overlap_ns = 0, compute_ns = 0;
  double wait_ns = 0;               // sum of its waits in matched collectives
  std::int64_t times_last = 0;
  TimeNs first_ns = 0, last_ns = 0;  // aligned span of its GPU work
};

struct TimeBin {
  TimeNs start_ns = 0, end_ns = 0;  // aligned, from the first arrival of the set
  std::int64_t collectives = 0;
  double median_spread_ns = 0;
  TimeNs max_spread_ns = 0;
  std::int64_t top_straggler = -1;  // rank most often last in the bin, -1 none
  std::int64_t top_straggler_times = 0;
};

// Collectives of one profiler step (ProfilerStep#N on the reference rank).
struct StepRow {
  std::int64_t step = 0;
  std::int64_t collectives = 0;
  double wait_ns = 0;               // sum over its collectives of the mean wait
  TimeNs transfer_ns = 0;
  double median_spread_ns = 0;
  TimeNs max_spread_ns = 0;
  std::int64_t top_straggler = -1;  // rank most often last in the step, -1 none
  std::int64_t top_straggler_times = 0;
};

struct RanksAnalysis {
  std::int64_t reference_rank = -1;
  std::vector<ClockOffset> offsets;  // one per rank, RankSet order
  bool clocks_trusted = false;
  bool matching_trusted = true;      // every pairing of collectives is confirmed (see the top of this file)
  std::string matching;              // how collectives were matched, said to the user
  // Why the matching or the clocks are not trusted ("matching: ...", "clocks: ..."; kinds
  // matching_not_trusted, clocks_not_trusted); said before any figure. Not empty: no straggler or hang
  // verdict is given (see verdicts_withheld).
  std::vector<Note> distrust;
  // Sampled or partial traces: ranks whose windows start or end at other collectives than the others'
  // (window_partial) and the shifts that lined them up (window_shifted). Collectives outside a rank's
  // window are not hangs.
  std::vector<Note> windows;
  bool verdicts_withheld() const { return !matching_trusted || !clocks_trusted; }
  TimeNs noise_ns = 0;               // a lead below this is not counted as straggling
  std::vector<MatchedCollective> collectives;  // complete ones (every rank), by aligned arrival
  std::vector<MatchedCollective> incomplete;   // missing on some rank: hang analysis
  std::vector<KindRow> kinds;
  std::vector<StragglerRow> stragglers;        // by times_last, descending
  std::vector<RankRow> ranks;
  std::vector<TimeBin> bins;
  std::vector<StepRow> steps;                  // empty when the traces name no steps
  std::vector<Note> notes;
  // The link bus bandwidth is read against: the lowest per-direction peak of the ranks' devices
  // (data/link_peaks.tsv), with how it was found; none when no device name matched.
  std::optional<LinkPeak> link;
  std::string link_note;
  std::string sizes_note;  // where message sizes came from, or why there are none
};

RanksAnalysis analyze_ranks(const RankSet& set, const SkewOptions& options = {});

// The median of `v` (the mean of the two middle values when their number is even), 0 when empty:
// the one median of the multi-rank engine (offsets, skew, the fleet's totals).
double median_of(std::vector<double> v);

}  // namespace kernscope::ranks
