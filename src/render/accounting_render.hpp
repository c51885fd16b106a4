// `kernscope account` and report's accounting: where each step's time goes (step_accounting.hpp)
// as tables (one row per step; one per group and phase), the lines report prints first, and the
// JSON object report writes.
#pragma once

#include <string>
#include <vector>

#include "analyses/steps/step_accounting.hpp"
#include "kernscope/render.hpp"
#include "kernscope/table.hpp"
#include "render/json_writer.hpp"

namespace kernscope {

// One row per step: Step, Group, Phase, Wall (the accounted window) and a column per category and
// per part that occurs anywhere in the trace (in ns).
Table step_accounting_table(const StepAnalysis& steps, const StepAccounting& accounting);
// One row per group of steps, then one per phase and the loop of the leading process.
Table accounting_groups_table(const StepAccounting& accounting);
// Lines: one per phase with the categories' shares, the loop's bottleneck, the top parts.
std::string render_accounting_summary(const StepAccounting& accounting, const std::string& indent);
// {"phases": [{"phase", "steps", "wall_ns", "categories_ns": {...}, "bottleneck"}], "bottleneck", ...}
void write_accounting_json(JsonWriter& json, const StepAccounting& accounting);
// `kernscope account --format json`: {"<each table's report>": rows, "accounting": {...}}.
std::string render_accounting_json(const std::vector<Table>& tables, const StepAccounting& accounting,
                                   const RenderOptions& options);
// Its tables, where the steps came from, then the summary.
std::string render_accounting_text(const std::vector<Table>& tables, const StepAccounting& accounting,
                                   const std::string& steps_method, const RenderOptions& options);

}  // namespace kernscope
