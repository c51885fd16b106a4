// The ranks of one run replayed with changes (`kernscope whatif RANK0 RANK1 ...`): each file its
// own clock, put on one by the ranks analysis's offsets where its matching and clocks are trusted,
// then replayed as one graph whose collectives wait for each other; else each trace apart, saying why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyses/steps/step_accounting.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/whatif/whatif.hpp"
#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/steps.hpp"

namespace kernscope::ranks {

// One trace and the changes to replay on it (each trace's own: roof= depends on its kernels).
struct RankReplayInput {
  const Trace* trace = nullptr;
  std::vector<WhatIfChange> changes;
};

// One trace's analyses and its replay. Held by pointer: the result points into the steps and context.
struct ReplayedRank {
  const Trace* trace = nullptr;
  std::unique_ptr<TraceContext> context;
  StepAnalysis steps;
  StepAccounting accounting;
  std::vector<WhatIfChange> changes;
  std::size_t given = 0;   // its place among the traces given
  std::int64_t rank = -1;  // its rank number, -1 where the set gives it none
  double offset_ns = 0;    // its clock less the reference rank's
  WhatIfResult result;
};

struct RanksReplay {
  bool together = false;           // replayed as one graph, collectives waiting for each other
  std::vector<Note> notes;  // whether and how they were put together, or why not
  std::vector<std::unique_ptr<ReplayedRank>> ranks;  // in rank order (the order given where none is known)
};

Result<RanksReplay> replay_ranks(const std::vector<RankReplayInput>& inputs, const OpRuleSet& rules, const StepOptions& steps);

}  // namespace kernscope::ranks
