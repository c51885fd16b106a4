#include "base/pattern_table.hpp"

#include <sstream>

namespace kernscope {

Result<std::vector<PatternRow>> read_pattern_rows(const std::string& text, const std::string& source, const std::string& first_column) {
  std::vector<PatternRow> rows;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string where = source + ":" + std::to_string(number);
    const auto tab = line.find('\t');
    if (tab == std::string::npos) return make_error(ErrorCode::kInvalidArgument, where + ": expected " + first_column + "<TAB>REGEX");
    rows.push_back({line.substr(0, tab), line.substr(tab + 1), where});
  }
  return rows;
}

}  // namespace kernscope
