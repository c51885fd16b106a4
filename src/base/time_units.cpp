#include "kernscope/time_units.hpp"

#include <array>
#include <string>

namespace kernscope {
namespace {

struct UnitScale {
  std::string_view suffix;
  std::int64_t ns;
};
// Longest suffixes first so "ms" is not read as "m" followed by "s".
constexpr std::array<UnitScale, 6> kUnits{{{"ns", 1},
                                           {"us", 1'000},
                                           {"ms", 1'000'000},
                                           {"s", 1'000'000'000},
                                           {"m", 60'000'000'000},
                                           {"h", 3'600'000'000'000}}};

Error grammar_error(std::string_view text, std::string_view why) {
  return Error{ErrorCode::kInvalidArgument,
               "invalid time '" + std::string(text) + "': " + std::string(why) +
                   " (expected terms like 1s2ms3us4ns; units ns us ms s m h)"};
}

}  // namespace

Result<TimeNs> parse_duration(std::string_view text) {
  if (text.empty()) return std::unexpected(grammar_error(text, "empty"));
  std::size_t pos = 0;
  std::int64_t total = 0;
  int terms = 0;
  while (pos < text.size()) {
    const std::size_t digits_begin = pos;
    std::int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, text[pos] - '0', &value)) {
        return std::unexpected(grammar_error(text, "value too large"));
      }
      ++pos;
    }
    if (pos == digits_begin) return std::unexpected(grammar_error(text, "expected a number"));
    std::int64_t scale = 1;
    if (pos < text.size()) {
      bool matched = false;
      for (const auto& unit : kUnits) {
        if (text.substr(pos, unit.suffix.size()) == unit.suffix) {
          scale = unit.ns;
          pos += unit.suffix.size();
          matched = true;
          break;
        }
      }
      if (!matched) return std::unexpected(grammar_error(text, "unknown unit"));
    } else if (terms > 0) {
      return std::unexpected(grammar_error(text, "a number without a unit must stand alone"));
    }
    std::int64_t term = 0;
    if (__builtin_mul_overflow(value, scale, &term) || __builtin_add_overflow(total, term, &total)) {
      return std::unexpected(grammar_error(text, "value too large"));
    }
    ++terms;
  }
  return static_cast<TimeNs>(total);
}

Result<TimeWindow> parse_time_window(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos) {
    return make_error(ErrorCode::kInvalidArgument,
                      "invalid time range '" + std::string(text) + "': expected [START]/[END]");
  }
  TimeWindow window;
  const auto start_text = text.substr(0, slash);
  const auto end_text = text.substr(slash + 1);
  if (!start_text.empty()) {
    auto start = parse_duration(start_text);
    if (!start) return std::unexpected(start.error());
    window.start = *start;
  }
  if (!end_text.empty()) {
    auto end = parse_duration(end_text);
    if (!end) return std::unexpected(end.error());
    window.end = *end;
  }
  if (window.start && window.end && *window.start > *window.end) {
    return make_error(ErrorCode::kInvalidArgument,
                      "invalid time range '" + std::string(text) + "': start is after end");
  }
  return window;
}

Result<TimeUnit> parse_time_unit(std::string_view text) {
  if (text == "ns" || text == "nsec") return TimeUnit::kNs;
  if (text == "us" || text == "usec") return TimeUnit::kUs;
  if (text == "ms" || text == "msec") return TimeUnit::kMs;
  if (text == "s" || text == "sec") return TimeUnit::kS;
  return make_error(ErrorCode::kInvalidArgument,
                    "invalid time unit '" + std::string(text) + "' (expected ns, us, ms or s)");
}

std::string_view time_unit_suffix(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNs: return "ns";
    case TimeUnit::kUs: return "us";
    case TimeUnit::kMs: return "ms";
    case TimeUnit::kS: return "sec";  // nsys's header label
  }
  return "ns";
}

std::int64_t time_unit_divisor(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNs: return 1;
    case TimeUnit::kUs: return 1'000;
    case TimeUnit::kMs: return 1'000'000;
    case TimeUnit::kS: return 1'000'000'000;
  }
  return 1;
}

}  // namespace kernscope
