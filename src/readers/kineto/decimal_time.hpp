// Exact conversion of a JSON number written in microseconds ("1712195495505583.047", "0.033",
// "12", "1.5e3") into integer nanoseconds. Absolute microsecond timestamps need 19-20 significant
// digits in nanoseconds, more than a double holds, so the digits are read as integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kernscope::kineto {

// Digits below one nanosecond round half away from zero. nullopt: not a number, or out of int64.
std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text);

}  // namespace kernscope::kineto
