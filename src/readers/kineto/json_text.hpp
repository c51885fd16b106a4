// The JSON lexical rules the Kineto splitter and the repair share, including the one rule JSON
// does not have: when a quote inside a string ends it (Kineto has written raw quotes in names).
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace kernscope::kineto {

constexpr bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
constexpr bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The escape starting at text[i] (a backslash): kIncomplete when text ends before it does.
enum class Escape { kValid, kInvalid, kIncomplete };
inline Escape escape_at(std::string_view text, std::size_t i) {
  if (i + 1 >= text.size()) return Escape::kIncomplete;
  const char e = text[i + 1];
  if (e == 'u') {
    if (i + 5 >= text.size()) return Escape::kIncomplete;
    return is_hex(text[i + 2]) && is_hex(text[i + 3]) && is_hex(text[i + 4]) && is_hex(text[i + 5]) ? Escape::kValid
                                                                                                    : Escape::kInvalid;
  }
  return e != '\0' && std::strchr("\"\\/bfnrt", e) ? Escape::kValid : Escape::kInvalid;
}

// A quote at text[i] inside a string ends it only if what follows (after whitespace) can follow
// a string in JSON: ',', ':', '}' or ']'. kUnknown: only whitespace up to the end of text.
enum class Quote { kEndsString, kInside, kUnknown };
inline Quote quote_at(std::string_view text, std::size_t i) {
  std::size_t k = i + 1;
  while (k < text.size() && is_json_space(text[k])) ++k;
  if (k >= text.size()) return Quote::kUnknown;
  const char next = text[k];
  return next == ',' || next == ':' || next == '}' || next == ']' ? Quote::kEndsString : Quote::kInside;
}

}  // namespace kernscope::kineto
