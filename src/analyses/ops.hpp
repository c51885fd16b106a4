// `ops` (operation classes) over a context several analyses of one run share (trace_context.hpp);
// the overload taking a trace is in kernscope/op_classes.hpp.
#pragma once

#include "kernscope/error.hpp"
#include "kernscope/op_classes.hpp"

namespace kernscope {

class TraceContext;

Result<OpsResult> classify_operations(const TraceContext& context);

}  // namespace kernscope
