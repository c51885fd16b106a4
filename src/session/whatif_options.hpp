// The options of whatif and critical-path: --change (repeatable) on top of the step options.
#pragma once

#include <vector>

#include "kernscope/whatif.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {

inline std::vector<OptionSpec> whatif_option_specs() {
  auto specs = step_option_specs();
  specs.push_back({"change", 'c', OptionKind::kList, "",
                   "a change to replay (repeatable): graphs, no-sync[=CALL], scale=CLASS:FACTOR, overlap-copies, overlap-comm, host=FACTOR"});
  return specs;
}

inline std::vector<OptionSpec> critical_path_option_specs() {
  auto specs = whatif_option_specs();
  specs.push_back({"perfetto", 0, OptionKind::kText, "", "write the steady group's middle step's path to FILE (Chrome trace JSON with flows)"});
  return specs;
}

inline Result<std::vector<WhatIfChange>> whatif_changes_of(const Options& o) {
  std::vector<WhatIfChange> changes;
  for (const auto& text : o.list("change")) {
    auto c = parse_whatif_change(text);
    if (!c) return std::unexpected(c.error());
    changes.push_back(*c);
  }
  return changes;
}

}  // namespace kernscope::session
