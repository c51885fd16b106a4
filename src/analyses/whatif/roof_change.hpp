// A what-if change priced by the roofline.
#pragma once

#include <string>

#include "analyses/whatif/whatif.hpp"
#include "analyses/work/roofline.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// roof=CLASS: the class's kernels at their roofline time, as kernscope roofline --by class measures
// it (the class's ideal time over its time: every kernel of the class scaled by that share, so the
// class's total is its ideal). Needs a source of the kernels' work (recorded shapes, a model config).
// The same from a roofline by class already computed (report's); `text` is the change as spelled.
Result<WhatIfChange> roof_change_of(const RooflineResult& by_class, const std::string& text, const std::string& op_class);
Result<WhatIfChange> roof_change(const Trace& trace, const OpRuleSet& rules, const StepOptions& steps, const std::string& text,
                                 const std::string& op_class);

}  // namespace kernscope
