// Every rank's own steps: each rank's step windows (as `kernscope steps` finds them in its trace:
// ProfilerStep#N, decode_step and other step annotations, or the work's period), its step-time and
// TPOT figures, the slowest rank's steps beside the other ranks' same steps, and the collectives
// grouped by their position within a step (layer index = order within the step) with the skew per
// position. A step's collectives come from each rank's own windows (a collective belongs to the
// window its launch falls in), so ranks need not share a clock for this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernscope/notes.hpp"
#include "kernscope/phase.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/time_units.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::ranks {

struct RankSet;
struct RanksAnalysis;

struct RankStep {
  TimeNs start_ns = 0, end_ns = 0;
  std::int64_t gpu_span_ns = 0;  // the step projected onto the GPU (0: it launched nothing)
};

// The steps of one rank: the group (name and phase) that describes it — the last decode group, else
// the group with most steps — and every window of the rank, for placing its collectives.
struct RankSteps {
  std::string method;  // how the windows were found, or why there are none
  std::string name;
  Phase phase = Phase::kUnknown;
  std::vector<RankStep> steps;  // of the group, start order
  Distribution wall, gpu_span;
  double tpot_ns = -1;          // p50; -1 when the steps are not decode steps
  std::string tpot_from;        // "step wall" or "GPU period"
};

// `global_pid` -1: the whole trace is the rank.
RankSteps rank_steps_of(const Trace& trace, std::int64_t global_pid);

// Index of the step of `steps` whose window holds `t`, -1 none.
std::int64_t step_index_at(const RankSteps& steps, TimeNs t);

struct RankStepRow {
  std::int64_t rank = 0;
  std::string method, name;
  Phase phase = Phase::kUnknown;
  Distribution wall, gpu_span;
  double tpot_ns = -1;
  std::string tpot_from;
};

struct SlowStepRow {
  std::int64_t step = 0;               // index within the slowest rank's group
  TimeNs wall_ns = 0;                  // on the slowest rank
  TimeNs min_wall_ns = 0, median_wall_ns = 0, max_wall_ns = 0;  // over all ranks' k-th step
  std::int64_t longest_rank = -1;      // the rank whose k-th step was longest
  std::int64_t collectives = 0;        // matched collectives of the reference rank's k-th step
  TimeNs max_spread_ns = 0;
  std::int64_t most_last_rank = -1, most_last_times = 0;
};

struct LayerRow {
  std::int64_t layer = 0;              // position within the step (0 = the step's first collective)
  std::int64_t collectives = 0;        // matched collectives at that position, over all steps
  double wait_ns = 0;                  // sum of their mean waits
  TimeNs transfer_ns = 0;
  double median_spread_ns = 0;
  TimeNs max_spread_ns = 0;
  std::int64_t top_straggler = -1, top_straggler_times = 0;  // last by more than the noise
  double mean_lead_ns = 0;             // of the top straggler's leads at this position
};

struct StepsView {
  std::vector<RankStepRow> ranks;
  std::int64_t slowest_rank = -1;      // highest mean step wall
  std::string slowest_why;
  std::vector<SlowStepRow> slowest_steps;
  std::vector<LayerRow> layers;
  std::vector<Note> notes;
};

StepsView analyze_rank_steps(const RankSet& set, const RanksAnalysis& analysis);

}  // namespace kernscope::ranks
