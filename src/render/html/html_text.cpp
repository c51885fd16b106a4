#include "render/html/html_text.hpp"

#include <charconv>
#include <cmath>

#include "base/text_util.hpp"
#include "base/utf8.hpp"

namespace kernscope::html {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_control(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F; }

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out += kReplacement;
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (is_control(c)) {
          out += kReplacement;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out;
}

std::string shortened(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0, i = 0;
  while (i < text.size() && chars < max_chars) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = c < 0x80 ? 1 : utf8_sequence_length(text, i);
    i += len == 0 ? 1 : len;
    ++chars;
  }
  if (i >= text.size()) return std::string(text);
  if (i == 0) return "\xE2\x80\xA6";
  // Drop the last code point kept (back to its lead byte) to make room for the ellipsis.
  std::size_t cut = i - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "\xE2\x80\xA6";
}

std::string fixed(double value, int digits) { return text::fixed(value, digits); }

std::string percent(double share, int digits) { return text::fixed(share * 100, digits) + " %"; }

std::string duration(double ns) {
  const double a = std::fabs(ns);
  auto three_digits = [](double v) { return text::fixed(v, v >= 100 ? 0 : v >= 10 ? 1 : 2); };
  if (a < 1e3) return text::fixed(ns, 0) + " ns";
  if (a < 1e6) return three_digits(ns / 1e3) + " \xC2\xB5s";
  if (a < 1e9) return three_digits(ns / 1e6) + " ms";
  return three_digits(ns / 1e9) + " s";
}

std::string sort_key(double value) {
  if (!std::isfinite(value)) return "0";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc{} ? std::string(buffer, end) : "0";
}

}  // namespace kernscope::html
