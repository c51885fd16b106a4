#include "model/kernel_short_name.hpp"

namespace kernscope {
namespace {

// Position of the bracket opening the balanced group that closes at `close` (text[close] is
// `close_char`), or npos when unbalanced.
std::size_t matching_open(std::string_view text, std::size_t close, char open_char, char close_char) {
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (text[i] == close_char) ++depth;
    else if (text[i] == open_char && --depth == 0) return i;
  }
  return std::string_view::npos;
}

}  // namespace

std::string_view kernel_short_name(std::string_view name) {
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  // Trailing qualifiers of member functions ("... const") are not part of the name.
  if (name.ends_with(" const")) name.remove_suffix(6);
  if (!name.empty() && name.back() == ')') {
    const std::size_t open = matching_open(name, name.size() - 1, '(', ')');
    if (open == std::string_view::npos || open == 0) return name;
    name = name.substr(0, open);
  }
  if (!name.empty() && name.back() == '>') {
    const std::size_t open = matching_open(name, name.size() - 1, '<', '>');
    if (open == std::string_view::npos || open == 0) return name;
    name = name.substr(0, open);
  }
  // The last "::" or space outside any brackets starts the function's own name.
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    const char c = name[i];
    if (c == ')' || c == '>' || c == ']' || c == '}') ++depth;
    else if (c == '(' || c == '<' || c == '[' || c == '{') --depth;
    else if (depth == 0 && (c == ' ' || (c == ':' && i > 0 && name[i - 1] == ':'))) {
      return name.substr(i + 1);
    }
  }
  return name;
}

}  // namespace kernscope
