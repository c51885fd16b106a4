// The phase of LLM inference a step or a kernel belongs to, and what a range's name says of it:
// one home for both, so `steps`, `ops` and the rules agree on what "prompt" or "generate" means.
#pragma once

#include <string_view>

namespace kernscope {

// kMixed: a step that both prefills and decodes (chunked prefill batched with decode requests).
enum class Phase { kPrefill, kDecode, kUnknown, kMixed };

std::string_view phase_name(Phase phase);

// From an annotation's name (case-insensitive): "prefill"/"prompt" → prefill, "decode"/"generate"
// → decode, anything else unknown.
Phase phase_from_name(std::string_view name);

}  // namespace kernscope
