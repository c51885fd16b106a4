#include "readers/ncu/ncu_values.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

namespace kernscope::readers::ncu {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One side of a unit ("Kbyte", "usecond", "cycle"): the word without its prefix, and the prefix's factor.
struct UnitPart {
  std::string word;   // lowercase, spelled as kernscope's base ("byte", "second", "cycle", "hz", ...)
  double factor = 1;  // prefix factor (time words: nanoseconds per unit, so whole values stay exact)
  bool known = false;
  bool prefixed = false;
};

constexpr std::array<std::string_view, 14> kCountWords = {"byte", "cycle", "inst", "warp", "thread", "block",
                                                         "sector", "request", "op", "flop", "pass", "register",
                                                         "transaction", "wavefront"};

double large_prefix(char p, bool binary) {
  switch (std::tolower(static_cast<unsigned char>(p))) {
    case 'k': return binary ? 1024.0 : 1e3;
    case 'm': return binary ? 1048576.0 : 1e6;
    case 'g': return binary ? 1073741824.0 : 1e9;
    case 't': return binary ? 1099511627776.0 : 1e12;
    case 'p': return binary ? 1125899906842624.0 : 1e15;
    default: return 0;
  }
}

UnitPart parse_part(std::string_view raw) {
  UnitPart part;
  const std::string u = lower(trim(raw));
  // Time: second, s, nsecond/ns, usecond/us, msecond/ms.
  static const std::array<std::pair<std::string_view, double>, 10> kTimes = {{{"second", 1e9}, {"s", 1e9},
                                                                              {"msecond", 1e6}, {"ms", 1e6},
                                                                              {"usecond", 1e3}, {"us", 1e3},
                                                                              {"nsecond", 1}, {"ns", 1},
                                                                              {"psecond", 1e-3}, {"ps", 1e-3}}};
  for (const auto& [name, factor] : kTimes) {
    if (u == name) return UnitPart{"second", factor, true, name != "second" && name != "s"};
  }
  // Frequency: hz, khz, mhz, ghz.
  if (u == "hz") return UnitPart{"hz", 1, true, false};
  if (u.size() == 3 && u.ends_with("hz") && large_prefix(u[0], false) > 0) return UnitPart{"hz", large_prefix(u[0], false), true, true};
  // Bytes: byte, B, KB, Kbyte, KiB, Kibyte, ...
  if (u == "b" || u == "byte" || u == "bytes") return UnitPart{"byte", 1, true, false};
  for (const std::string_view tail : {"ibyte", "ib", "byte", "b"}) {
    if (u.size() == tail.size() + 1 && u.ends_with(tail) && large_prefix(u[0], false) > 0) {
      const bool binary = tail.front() == 'i';
      return UnitPart{"byte", large_prefix(u[0], binary), true, true};
    }
  }
  // Counts with an optional decimal prefix (Kinst, Mcycle, ...).
  for (const std::string_view word : kCountWords) {
    if (u == word) return UnitPart{std::string(word), 1, true, false};
    if (u.size() == word.size() + 1 && u.ends_with(word) && large_prefix(u[0], false) > 0) {
      return UnitPart{std::string(word), large_prefix(u[0], false), true, true};
    }
  }
  return UnitPart{u, 1, false, false};
}

}  // namespace

std::optional<double> parse_ncu_number(std::string_view text) {
  text = trim(text);
  // Instance values after the aggregate (--print-metric-instances values).
  if (const std::size_t cut = text.find_first_of(";("); cut != std::string_view::npos && cut > 0) text = trim(text.substr(0, cut));
  std::string digits;
  digits.reserve(text.size());
  for (const char c : text) {
    if (c == ',' || c == ' ') continue;  // thousands separators
    digits += c;
  }
  if (digits.empty()) return std::nullopt;
  double value = 0;
  const char* begin = digits.data();
  const char* end = begin + digits.size();
  if (*begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

BaseValue to_base_unit(double value, std::string_view unit) {
  const std::string_view u = trim(unit);
  if (u.empty() || u == "%") return BaseValue{value, std::string(u), false};
  const std::size_t slash = u.find('/');
  const UnitPart num = parse_part(u.substr(0, slash));
  if (slash == std::string_view::npos) {
    if (!num.known) return BaseValue{value, std::string(u), false};
    if (num.word == "second") return BaseValue{value * num.factor, "ns", num.prefixed};
    return BaseValue{value * num.factor, num.word, num.prefixed};
  }
  const UnitPart den = parse_part(u.substr(slash + 1));
  if (!num.known || !den.known) return BaseValue{value, std::string(u), false};
  // Per unit of time: to per second (den.factor is in ns); per anything else: as the prefixes say.
  const double per = den.word == "second" ? 1e9 / den.factor : 1 / den.factor;
  const double scaled = value * num.factor * per;
  const bool prefixed = num.prefixed || den.prefixed;
  // cycle/second is a frequency; everything else keeps its words ("byte/second", "inst/cycle").
  if (num.word == "cycle" && den.word == "second") return BaseValue{scaled, "hz", prefixed};
  return BaseValue{scaled, num.word + "/" + den.word, prefixed};
}

}  // namespace kernscope::readers::ncu
