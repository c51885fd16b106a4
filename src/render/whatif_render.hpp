// `kernscope whatif` and `kernscope critical-path` (whatif.hpp): tables, the text a user reads
// first, the JSON objects, and the critical path of one step as a Perfetto trace with flows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
//  "calibration": {...}, "notes": [{"kind", "severity", "count", "text"}]}
void write_whatif_json(JsonWriter& json, const WhatIfResult& result);

// The ranks of one run replayed (`kernscope whatif RANK0 RANK1 ...`): each rank's result with its trace.
struct RankWhatIf {
  std::int64_t rank = 0;  // its rank number, or its place among the traces given where none is known
  std::string path;
  double offset_ns = 0;   // its clock less the reference rank's
  const StepAnalysis* steps = nullptr;
  const WhatIfResult* result = nullptr;
};
// The groups' and the steps' tables, each rank's rows with a Rank column in front.
std::vector<Table> whatif_ranks_tables(const std::vector<RankWhatIf>& ranks);
// The notes (whether and how the ranks were replayed together) first, then each rank's text.
std::string render_whatif_ranks_text(const std::vector<Note>& notes, const std::vector<RankWhatIf>& ranks);
// {"together", "notes": [{"kind", "severity", "count", "text"}], "ranks": [{"rank", "path", "offset_ns",
//  "whatif": {write_whatif_json}}]}
void write_whatif_ranks_json(JsonWriter& json, bool together, const std::vector<Note>& notes, const std::vector<RankWhatIf>& ranks);

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
