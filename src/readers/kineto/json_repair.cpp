#include "readers/kineto/json_repair.hpp"

#include <cstring>

namespace kernscope::kineto {
namespace {

constexpr bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
constexpr bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when invalid.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len = 0;
  unsigned min_next = 0x80, max_next = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) min_next = 0xA0;
    if (c == 0xED) max_next = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) min_next = 0x90;
    if (c == 0xF4) max_next = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (b(i + 1) < min_next || b(i + 1) > max_next) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

std::string repair_json(std::string_view s, RepairCounts& counts) {
  std::string out;
  out.reserve(s.size() + 16);
  bool in_string = false;
  std::size_t last_significant = std::string::npos;  // index in `out` of the last byte outside strings
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (!in_string) {
      if (c == '"') {
        in_string = true;
        out.push_back(c);
        last_significant = out.size() - 1;
        continue;
      }
      if ((c == '}' || c == ']') && last_significant != std::string::npos && out[last_significant] == ',') {
        out.erase(last_significant, 1);
        ++counts.trailing_commas;
      }
      out.push_back(c);
      if (!is_space(c)) last_significant = out.size() - 1;
      continue;
    }
    if (c == '\\') {
      const char e = i + 1 < s.size() ? s[i + 1] : '\0';
      const bool valid = (e == 'u') ? (i + 5 < s.size() && is_hex(s[i + 2]) && is_hex(s[i + 3]) &&
                                       is_hex(s[i + 4]) && is_hex(s[i + 5]))
                                    : (e != '\0' && std::strchr("\"\\/bfnrt", e) != nullptr);
      if (valid) {
        out.push_back(c);
        out.push_back(e);
        ++i;
      } else {
        out += "\\\\";  // a lone backslash (a Windows path, a regex) stands for itself
        ++counts.escapes;
      }
      continue;
    }
    if (c == '"') {
      std::size_t k = i + 1;
      while (k < s.size() && is_space(s[k])) ++k;
      const char next = k < s.size() ? s[k] : '\0';
      if (next == ',' || next == ':' || next == '}' || next == ']' || next == '\0') {
        in_string = false;
        out.push_back(c);
        last_significant = out.size() - 1;
      } else {
        out += "\\\"";
        ++counts.quotes;
      }
      continue;
    }
    if (u < 0x20) {
      static const char* kHex = "0123456789abcdef";
      out += "\\u00";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
      ++counts.control_chars;
      continue;
    }
    if (u >= 0x80) {
      const std::size_t len = utf8_sequence(s, i);
      if (len == 0) {
        out += "\\ufffd";
        ++counts.invalid_utf8;
      } else {
        out.append(s.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace kernscope::kineto
