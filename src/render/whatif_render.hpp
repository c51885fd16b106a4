// `kernscope whatif` and `kernscope critical-path` (whatif.hpp): tables, the text a user reads
// first, the JSON objects, and the critical path of one step as a Perfetto trace with flows.
#pragma once

#include <string>

#include "kernscope/table.hpp"
#include "analyses/whatif/whatif.hpp"
#include "render/json_writer.hpp"

namespace kernscope {

// One row per replayed step: Step, Group, Phase, Traced, Predicted, Change (%).
Table whatif_steps_table(const StepAnalysis& steps, const WhatIfResult& result);
// One row per group: medians and means, traced and predicted.
Table whatif_groups_table(const WhatIfResult& result);
// What was replayed with what, then one line per group, the headline (TPOT/TTFT) first.
std::string render_whatif_text(const WhatIfResult& result);
// {"changes": [...], "groups": [{"group", "phase", "steps", "traced_step_ns", "predicted_step_ns", ...}],
//  "calibration": {...}, "notes": [...]}
void write_whatif_json(JsonWriter& json, const WhatIfResult& result);

// One row per group and part of the path: Group, Phase, Category, Part, Time on path, Share (%).
Table critical_path_table(const WhatIfResult& result);
// Per group: where its steps' critical path runs (by category, part and operation), and whether
// the step accounting names the same category first.
std::string render_critical_path_text(const WhatIfResult& result);
void write_critical_path_json(JsonWriter& json, const WhatIfResult& result);
// The links of one step's path (WhatIfResult::links) as Chrome trace JSON, which Perfetto opens: a
// slice per link on its thread or stream, and flow arrows from each link to the next.
std::string critical_path_perfetto(const WhatIfResult& result);

// The group whose steps the headline reads: the last group of the decode phase (TPOT), else of
// prefill (TTFT), else the group with most steps. nullptr when there is none.
const WhatIfGroup* headline_group(const WhatIfResult& result);

}  // namespace kernscope
