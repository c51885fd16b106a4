#include "readers/kineto/json_repair.hpp"

#include "base/utf8.hpp"
#include "readers/kineto/json_text.hpp"

namespace kernscope::kineto {

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
      if (!is_json_space(c)) last_significant = out.size() - 1;
      continue;
    }
    if (c == '\\') {
      if (escape_at(s, i) == Escape::kValid) {
        out.push_back(c);
        out.push_back(s[i + 1]);
        ++i;
      } else {
        out += "\\\\";  // a lone backslash (a Windows path, a regex) stands for itself
        ++counts.escapes;
      }
      continue;
    }
    if (c == '"') {
      if (quote_at(s, i) != Quote::kInside) {  // at the end of the element a quote closes
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
      const std::size_t len = utf8_sequence_length(s, i);
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
