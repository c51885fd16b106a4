// Link peak table: parsing and matching by device-name words.
#include "ranks/ranks_links.hpp"

#include "analyses/work/gpu_peaks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

extern const char* const kernscope_builtin_link_peaks;  // data/link_peaks.tsv, generated at build time

namespace kernscope::ranks {

Result<std::vector<LinkPeak>> parse_link_peaks(const std::string& text) {
  static const std::vector<std::string> columns = {"name", "match", "link", "per_direction_gbs", "source"};
  std::vector<LinkPeak> rows;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split_tab_cells(line);
    const std::string where = "link_peaks.tsv:" + std::to_string(number);
    if (!header) {
      if (cells != columns) return make_error(ErrorCode::kBadInput, where + ": expected the header name, match, link, per_direction_gbs, source");
      header = true;
      continue;
    }
    if (cells.size() != columns.size()) return make_error(ErrorCode::kBadInput, where + ": expected 5 tab-separated columns");
    double gbs = 0;
    const auto& g = cells[3];
    auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), gbs);
    if (ec != std::errc() || end != g.data() + g.size() || !(gbs > 0) || !std::isfinite(gbs)) {
      return make_error(ErrorCode::kBadInput, where + ": per_direction_gbs '" + g + "' is not a positive number");
    }
    if (device_name_words(cells[1]).empty()) return make_error(ErrorCode::kBadInput, where + ": empty match");
    rows.push_back({cells[0], cells[1], cells[2], cells[4], gbs * 1e9, number});
  }
  if (!header) return make_error(ErrorCode::kBadInput, "link_peaks.tsv: no header line");
  return rows;
}

const std::vector<LinkPeak>& builtin_link_peaks() {
  static const std::vector<LinkPeak> rows = [] {
    auto parsed = parse_link_peaks(kernscope_builtin_link_peaks);
    // The table is compiled in and checked by a unit test: a bad row is a build defect.
    if (!parsed) std::abort();
    return *parsed;
  }();
  return rows;
}

std::optional<LinkPeak> match_link_peak(std::string_view device_name, const std::vector<LinkPeak>& rows) {
  const auto name_words = device_name_words(device_name);
  const LinkPeak* best = nullptr;
  std::size_t best_words = 0;
  bool tie = false;
  for (const auto& row : rows) {
    const auto needed = device_name_words(row.match);
    const bool all = std::all_of(needed.begin(), needed.end(), [&](const std::string& w) {
      return std::find(name_words.begin(), name_words.end(), w) != name_words.end();
    });
    if (!all) continue;
    if (needed.size() > best_words) {
      best = &row;
      best_words = needed.size();
      tie = false;
    } else if (needed.size() == best_words) {
      tie = true;
    }
  }
  if (!best || tie) return std::nullopt;
  return *best;
}

}  // namespace kernscope::ranks
