// `kernscope spec` (analyses/spec/spec.hpp): its JSON document and the lines a user reads under
// the table of verify steps.
#pragma once

#include <string>

#include "analyses/spec/spec.hpp"

namespace kernscope {

// {"present", "evidence", "engine", "tokens_from", "steps": [...], "totals": {...}, "plain_decode":
// {...}, "drafting": {...}, "notes"} (docs/interfaces.md).
std::string render_spec_json(const SpecAnalysis& spec);
// Evidence, tokens, acceptance, time per emitted token against plain decode, drafting.
std::string render_spec_text(const SpecAnalysis& spec);

}  // namespace kernscope
