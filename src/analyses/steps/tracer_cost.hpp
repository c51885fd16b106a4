// What kernscope's tracer cost the program it traced, for `info`, `report` and `steps`:
//  - measured in the trace: the tracer's own time on the program's threads (KERNSCOPE_TRACER_COST:
//    its CUPTI callbacks, set-up, finish) and CUPTI's overhead records (PROFILER_OVERHEAD);
//  - estimated: what CUPTI's instrumentation adds inside each launch call, which the process cannot
//    time: launches per step x a per-launch cost measured whole-program on a matching GPU, CUPTI and
//    set of recorded kinds (data/tracer_cost.tsv). Without a matching row there is no figure, and
//    the sentence says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct TracerCostCalibration {
  std::string gpu, host, cupti, kinds, source;
  double us_per_launch = 0;
};

// data/tracer_cost.tsv's layout; errors name the line.
Result<std::vector<TracerCostCalibration>> parse_tracer_cost_calibration(std::string_view tsv);
// The table compiled in from data/tracer_cost.tsv.
const std::vector<TracerCostCalibration>& builtin_tracer_cost_calibration();

// "defaults" for the default kinds (kDefaultRecordKinds) with the default API calls, else the kinds as the tracer wrote them
// (KERNSCOPE_TRACER_INFO recorded_kinds: "kernel,... api:default"), the API part kept only when
// runtime or driver calls were recorded and --api all chose them.
std::string canonical_recorded_kinds(std::string_view recorded);

struct TracerCostEstimate {
  bool kernscope_trace = false;  // the rest is meaningful only for kernscope tracer traces
  // Measured: the tracer's own time, on the program's threads and on CUPTI's/its own threads.
  std::int64_t program_calls = 0, program_ns = 0, other_calls = 0, other_ns = 0;
  std::vector<TracerThreadCost> by_site;  // program threads' time summed per site (global_tid 0)
  std::int64_t timing_cost_ns = -1;       // what one timing adds (-1: not recorded)
  std::int64_t overhead_records = 0, overhead_ns = 0;  // CUPTI's PROFILER_OVERHEAD records
  bool overhead_loaded = false;
  // The trace's keys for the calibration.
  std::string gpu, cupti, kinds, host_cpu;
  // The estimate: a calibration row, and the launches and host time it applies to.
  std::optional<TracerCostCalibration> calibration;
  std::string not_estimated;  // why there is no figure (empty when there is one)
  std::string basis;          // "measure:decode_step (median of 64 steps)" or "the whole trace"
  double launches = 0;        // per step (or in the whole trace)
  double host_ns = 0;         // the traced host time they were made in (step wall, or the API span)
  double added_ns = 0;        // launches x cost
  double inflation_percent = 0;  // added / (host - added)
  std::int64_t total_launches = 0;
  // In words and as JSON: render/tracer_cost_render.hpp.
};

// `steps` (the step analysis of the trace) chooses the group of steps the estimate is stated for:
// the largest group (the later on a tie); null or without steps: the whole trace.
TracerCostEstimate estimate_tracer_cost(const Trace& trace, const StepAnalysis* steps,
                                        const std::vector<TracerCostCalibration>& calibration);

// Host times with the estimated tracer cost taken out, step by step: the tracer's time in a step's
// launches can only have lengthened the step by as much as the GPU waited for the host in it, so
// each step loses launches x cost, at most its GPU idle time (capped steps: GPU-bound ones, whose
// host time hid behind GPU work).
struct StepCorrection {
  bool sound = false;
  std::string why;                        // why it is not sound, or how it was made
  std::vector<std::int64_t> corrected_ns;  // per step (empty when not sound)
  std::int64_t capped = 0;                // steps whose removal was cut to their GPU idle time
};
StepCorrection correct_step_times(const StepAnalysis& steps, const TracerCostEstimate& estimate);

}  // namespace kernscope
