// roof=CLASS: see roof_change.hpp.
#include "analyses/whatif/roof_change.hpp"

#include <algorithm>


namespace kernscope {

Result<WhatIfChange> roof_change_of(const RooflineResult& by_class, const std::string& text, const std::string& op_class) {
  for (const auto& row : by_class.rows) {
    if (row.name != op_class) continue;
    if (!row.has_work || row.time_ns <= 0) {
      return make_error(ErrorCode::kNoData, "--change " + text + ": the roofline knows no work of the " + op_class +
                                                " kernels (no recorded shapes or model config for them: see kernscope roofline)");
    }
    WhatIfChange c;
    c.kind = WhatIfChange::Kind::kScale;
    c.op_class = op_class;
    c.factor = std::min(1.0, row.ideal_ns / static_cast<double>(row.time_ns));
    c.text = text;
    return c;
  }
  return make_error(ErrorCode::kInvalidArgument, "--change " + text + ": no kernel of class " + op_class + " in this trace (kernscope ops lists them)");
}

Result<WhatIfChange> roof_change(const Trace& trace, const OpRuleSet& rules, const StepOptions& steps, const std::string& text,
                                 const std::string& op_class) {
  if (auto known = check_change_class(text, op_class); !known) return std::unexpected(known.error());
  RooflineOptions options;
  options.grouping = RooflineGrouping::kClass;
  options.rules = &rules;
  options.steps = steps;
  auto sol = roofline(trace, options);
  if (!sol) return make_error(ErrorCode::kNoData, "--change " + text + ": no roofline for this trace: " + sol.error().message);
  return roof_change_of(*sol, text, op_class);
}

}  // namespace kernscope
