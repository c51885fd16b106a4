// Time values and nsys's time grammar. Time is always int64 nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kernscope/error.hpp"

namespace kernscope {

using TimeNs = std::int64_t;
inline constexpr TimeNs kNoTime = INT64_MIN;  // a missing end (e.g. an NVTX range never closed)
inline constexpr TimeNs kMaxTime = INT64_MAX;

// Parses nsys's duration grammar: a non-negative sum of <integer><unit> terms with units
// ns, us, ms, s, m, h (e.g. "1s2ms3us4ns", "500ms", "2m"). A bare integer is nanoseconds.
Result<TimeNs> parse_duration(std::string_view text);

// "--filter-time [START]/[END]": either side may be empty.
struct TimeWindow {
  std::optional<TimeNs> start;
  std::optional<TimeNs> end;
};
Result<TimeWindow> parse_time_window(std::string_view text);

enum class TimeUnit { kNs, kUs, kMs, kS };
Result<TimeUnit> parse_time_unit(std::string_view text);
std::string_view time_unit_suffix(TimeUnit unit);
std::int64_t time_unit_divisor(TimeUnit unit);

}  // namespace kernscope
