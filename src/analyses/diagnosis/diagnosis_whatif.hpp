// What report's actions predict: each action that a what-if change models (CUDA graphs, removed
// synchronizations, overlapped copies or collectives) carries the step time the replay predicts for
// the headline group (TPOT's, else TTFT's, else the group with most steps), and is ranked by the
// time that saves over the group's steps rather than by the time its cause takes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analyses/trace_context.hpp"

namespace kernscope {

struct PredictedChange {
  bool ran = false;
  std::string change;     // as given to kernscope whatif --change
  std::string headline;   // "TPOT", "TTFT" or "step time"
  std::string group;
  std::int64_t steps = 0;        // replayed
  std::int64_t group_steps = 0;  // in the group
  std::int64_t traced_ns = 0, predicted_ns = 0;  // medians
  // Over the group's steps (0 where the change saves nothing).
  std::int64_t saving_ns() const { return ran && traced_ns > predicted_ns ? (traced_ns - predicted_ns) * group_steps : 0; }
  // "predicted: TPOT 13.048 -> 2.011 ms (-84.6 %, medians of 64 replayed steps of :measure:decode_step;
  // kernscope whatif --change graphs)"
  std::string text() const;
  // "medians of 64 replayed steps of :measure:decode_step; kernscope whatif --change graphs"
  std::string source() const;
};

// Replays the headline group's steps of the leading process (at most 64, the middle ones) with
// `change`; ran is false where there are no steps.
// `graphs`: replays of one report share it, so the headline group's graph is built once.
PredictedChange predict_change(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                               const std::string& change, std::shared_ptr<WhatIfGraphCache> graphs = nullptr);
// The same with the change already made (its text is what the prediction cites): roof=CLASS is a
// scale of the class by its roofline's ideal over its time, which the caller knows.
PredictedChange predict_change(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                               const WhatIfChange& change, std::shared_ptr<WhatIfGraphCache> graphs = nullptr);

}  // namespace kernscope
