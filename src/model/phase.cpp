#include "kernscope/phase.hpp"

#include <string>

#include "base/text_util.hpp"

namespace kernscope {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::kPrefill: return "prefill";
    case Phase::kDecode: return "decode";
    case Phase::kMixed: return "mixed";
    case Phase::kUnknown: break;
  }
  return "unknown";
}

Phase phase_from_name(std::string_view name) {
  const std::string n = text::lowercase(name);
  if (n.find("prefill") != std::string::npos || n.find("prompt") != std::string::npos) return Phase::kPrefill;
  if (n.find("decode") != std::string::npos || n.find("generate") != std::string::npos) return Phase::kDecode;
  return Phase::kUnknown;
}

}  // namespace kernscope
