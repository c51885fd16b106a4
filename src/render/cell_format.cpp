// Number formats of nsys stats: integers as they are, floats as Python prints them (shortest
// round-trip repr, "7216.0"), non-ns time units and byte units with three decimals.
#include <cctype>
#include <fmt/format.h>

#include <cmath>

#include "kernscope/render.hpp"

namespace kernscope {
namespace {

// Python's repr(float): shortest round-trip digits, always with a decimal point or exponent.
std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

double as_double(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  return std::get<double>(cell);
}

}  // namespace

std::string column_header(const Column& column, TimeUnit time_unit) {
  switch (column.unit) {
    case Unit::kDuration:
    case Unit::kTimestamp: return column.name + " (" + std::string(time_unit_suffix(time_unit)) + ")";
    case Unit::kBytes: return column.name + " (MB)";
    case Unit::kThroughput: return column.name + " (MB/s)";
    case Unit::kPercent: return column.name + " (%)";
    case Unit::kNone: break;
  }
  return column.name;
}

std::string column_key(const Column& column) {
  std::string key;
  char previous = ' ';
  for (const char c : column.name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      // A word boundary inside CamelCase (StdDev, GridXYZ stays one word after its first capital).
      if (std::isupper(u) && std::islower(static_cast<unsigned char>(previous)) && !key.empty() && key.back() != '_') key += '_';
      key += static_cast<char>(std::tolower(u));
    } else if (c == '%') {
      if (!key.empty() && key.back() != '_') key += '_';
      key += "pct";
    } else if (!key.empty() && key.back() != '_') {
      key += '_';
    }
    previous = c;
  }
  while (!key.empty() && key.back() == '_') key.pop_back();
  if (key.empty()) key = "value";
  if (std::isdigit(static_cast<unsigned char>(key.front()))) key = "n" + key;
  const auto suffixed = [&](std::string_view suffix) {
    const bool has = key.size() >= suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
    return has ? key : key + std::string(suffix);
  };
  switch (column.unit) {
    case Unit::kDuration:
    case Unit::kTimestamp: return suffixed("_ns");
    case Unit::kBytes: return suffixed("_bytes");
    case Unit::kThroughput: return suffixed("_bytes_per_s");
    case Unit::kPercent: return suffixed("_pct");
    case Unit::kNone: break;
  }
  return key;
}

std::string format_cell(const Cell& cell, Unit unit, TimeUnit time_unit) {
  if (std::holds_alternative<std::monostate>(cell)) return {};
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  switch (unit) {
    case Unit::kDuration:
    case Unit::kTimestamp:
      if (time_unit != TimeUnit::kNs) {
        // nsys scales by multiplying with the inverse (x * 0.001 for us): dividing differs in the
        // last printed digit for values such as 758.5 ns (0.759 us in nsys, 0.758 by division).
        // It prints 3 decimals for us, 4 for ms and s.
        return fmt::format("{:.{}f}", as_double(cell) * (1.0 / static_cast<double>(time_unit_divisor(time_unit))),
                           time_unit == TimeUnit::kUs ? 3 : 4);
      }
      break;
    case Unit::kBytes:
    case Unit::kThroughput: return fmt::format("{:.3f}", as_double(cell) / 1e6);
    case Unit::kPercent:
    case Unit::kNone: break;
  }
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  return python_float(std::get<double>(cell));
}

JsonCell json_cell(const Cell& cell, Unit unit, TimeUnit time_unit) {
  if (std::holds_alternative<std::monostate>(cell)) return {JsonCell::Kind::kString, ""};
  if (const auto* s = std::get_if<std::string>(&cell)) return {JsonCell::Kind::kString, *s};
  std::string text = format_cell(cell, unit, time_unit);
  if (text == "nan" || text == "inf" || text == "-inf") return {JsonCell::Kind::kNull, ""};
  return {JsonCell::Kind::kNumber, std::move(text)};
}

}  // namespace kernscope
