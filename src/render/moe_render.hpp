// `kernscope moe` (analyses/moe/moe.hpp): its JSON document and the lines a user reads under the
// roles and layers tables.
#pragma once

#include <string>

#include "analyses/moe/moe.hpp"

namespace kernscope {

// {"present", "evidence", "roles": [...], "layers": [...], "dispatch_combine", "tokens_per_expert",
// "perfect_router": {...}, "notes"} (docs/interfaces.md).
std::string render_moe_json(const MoeAnalysis& moe);
// Where the MoE layers come from, dispatch/combine, tokens per expert, the perfect-router verdict.
std::string render_moe_text(const MoeAnalysis& moe);

}  // namespace kernscope
