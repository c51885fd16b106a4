// `kernscope steps`: the per-step table, the per-group table and the summary under the table.
#pragma once

#include <string>

#include "kernscope/steps.hpp"
#include "kernscope/table.hpp"

namespace kernscope {

Table steps_table(const StepAnalysis& steps);
// One row per group of steps (name and phase): count and wall/kernel/GPU-period percentiles.
Table step_groups_table(const StepAnalysis& steps);
// The text under the table: groups, headline TPOT/TTFT figures, how steps were found, notes.
std::string render_steps_summary(const StepAnalysis& steps);

}  // namespace kernscope
