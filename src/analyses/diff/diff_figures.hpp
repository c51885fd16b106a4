// What a diff, a comparison and a gate compare, measured once per trace: kernels by identity,
// operation classes, NVTX ranges, and the step figures (TTFT, TPOT, per-step GPU busy, idle,
// launch and sync time) with their per-step samples, which the gate resamples to see the noise.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyses/diff/kernel_identity.hpp"
#include "kernscope/analysis_inputs.hpp"
#include "kernscope/error.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// Count, total and every duration of one kernel, class or NVTX range name.
struct Durations {
  std::string display;   // the name a person reads
  std::string op_class;  // kernels only
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  std::vector<std::int64_t> values;
  void add(std::int64_t ns) {
    ++count;
    total_ns += ns;
    values.push_back(ns);
  }
};

// One trace reduced to its figures.
struct RunFigures {
  std::string path, source_format;
  std::vector<std::string> gpus;  // device names, in id order
  bool llm_inference = false;
  std::string step_method;        // how the steps were found
  std::string tpot_from;          // "step wall" or "GPU period"
  std::vector<std::int64_t> tpot, ttft;  // one sample per decode step / prefill step
  // The measured steps (the last decode group, else the largest group of steps), one entry each.
  std::vector<std::int64_t> step_busy, step_idle, step_launch, step_sync, step_kernel;
  // Their accounting (step_accounting.hpp): each step's time (start until its range or GPU work
  // ends) and its six categories, in kAllTimeCategories order.
  std::vector<std::int64_t> step_time;
  std::array<std::vector<std::int64_t>, 6> step_category;
  std::vector<std::map<std::string, std::int64_t>> step_class_ns;
  std::vector<std::unordered_map<std::string, std::int64_t>> step_kernel_ns;  // by kernel identity
  std::map<std::string, Durations> kernels;  // by kernel identity
  // By operation class (memcpy and memset included), without the setup before the first step.
  std::map<std::string, Durations> classes;
  std::string setup_note;  // what was left out of `classes` as setup; empty: nothing
  std::map<std::string, Durations> nvtx;     // by "domain:text"
  std::int64_t total_kernel_ns = 0;
};

// One side of a diff or one column of a comparison: a trace, or several runs of one program.
struct SideFigures {
  std::string label;
  std::vector<RunFigures> runs;
};

Result<RunFigures> measure_run(const Trace& trace, IdentityMode mode, const OpRuleSet& rules);

// Every group measured, kernels matched by one identity across all of them (`identity` says which).
Result<std::vector<SideFigures>> measure_groups(const std::vector<TraceGroup>& groups, const OpRuleSet& rules,
                                                std::string& identity);

// The event kinds measure_run reads.
EventKinds figures_event_kinds();

}  // namespace kernscope
