// UTF-8 validity, for writers that must never emit bytes a strict JSON parser rejects.
#pragma once

#include <cstddef>
#include <string_view>

namespace kernscope {

// Length (2-4) of the valid multi-byte UTF-8 sequence starting at text[i], or 0 when the bytes
// there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

}  // namespace kernscope
