// Small text helpers shared by the analyses that write sentences (rules, diagnosis).
#pragma once

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <string_view>

namespace kernscope::text {

// A number with a fixed count of decimals ("13.033").
inline std::string fixed(double value, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << value;
  return s.str();
}

// A share as a percentage with one decimal ("86.3 %").
inline std::string percent(double share) { return fixed(share * 100, 1) + " %"; }

// Nanoseconds as milliseconds with three decimals ("13.036 ms").
inline std::string millis(double ns) { return fixed(ns / 1e6, 3) + " ms"; }

inline std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace kernscope::text
