#include <algorithm>
#include <cmath>

#include "render/html/distribution.hpp"
#include "render/html/html_text.hpp"
#include "render/html/svg.hpp"

namespace kernscope::html {
namespace {

constexpr int kBins = 30;

// Counts in kBins log-spaced bins from the shortest to the longest duration (one bin when all are
// equal).
std::vector<std::int64_t> log_bins(const std::vector<std::int64_t>& sorted, double lo, double hi) {
  std::vector<std::int64_t> counts(lo >= hi ? 1 : kBins, 0);
  const double span = std::log(hi) - std::log(lo);
  for (std::int64_t v : sorted) {
    std::size_t bin = 0;
    if (counts.size() > 1) {
      const double t = (std::log(std::max(static_cast<double>(v), lo)) - std::log(lo)) / span;
      bin = std::min<std::size_t>(counts.size() - 1, static_cast<std::size_t>(t * static_cast<double>(counts.size())));
    }
    ++counts[bin];
  }
  return counts;
}

}  // namespace

std::string histogram_grid(const std::string& id, std::string_view description, const std::vector<DurationDistribution>& rows) {
  constexpr int kColumns = 3;
  constexpr double kCellWidth = 320, kCellHeight = 130, kPlotLeft = 12, kPlotWidth = 290, kPlotTop = 22, kPlotHeight = 72;
  const char* const bar_color = "#59a14f";
  const auto grid_rows = (rows.size() + kColumns - 1) / kColumns;
  Svg svg(id, 960, static_cast<int>(kCellHeight * static_cast<double>(grid_rows)) + 4, description);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double left = kCellWidth * static_cast<double>(i % kColumns) + kPlotLeft;
    const double top = kCellHeight * static_cast<double>(i / kColumns) + kPlotTop;
    const double lo = static_cast<double>(std::max<std::int64_t>(r.sorted_ns.front(), 1));
    const double hi = static_cast<double>(std::max<std::int64_t>(r.sorted_ns.back(), 1));
    const auto counts = log_bins(r.sorted_ns, lo, hi);
    const double most = static_cast<double>(*std::max_element(counts.begin(), counts.end()));
    svg.text(left, top - 8, shortened(r.name, 44), "start", "label", r.name, r.name);
    svg.plot_frame(left, top, kPlotWidth, kPlotHeight);
    const double bar_width = kPlotWidth / static_cast<double>(counts.size());
    for (std::size_t b = 0; b < counts.size(); ++b) {
      if (counts[b] == 0) continue;
      // Square-root heights: a tail of a few calls stays visible beside a mode of thousands.
      const double h = std::max(1.5, kPlotHeight * std::sqrt(static_cast<double>(counts[b]) / most));
      const double from = counts.size() == 1 ? lo : lo * std::pow(hi / lo, static_cast<double>(b) / static_cast<double>(counts.size()));
      const double to = counts.size() == 1 ? hi : lo * std::pow(hi / lo, static_cast<double>(b + 1) / static_cast<double>(counts.size()));
      svg.rect(left + bar_width * static_cast<double>(b), top + kPlotHeight - h, std::max(bar_width - 1, 1.0), h, bar_color,
               std::to_string(counts[b]) + " calls from " + duration(from) + " to " + duration(to));
    }
    svg.line(left, top + kPlotHeight, left + kPlotWidth, top + kPlotHeight, "#777");
    svg.text(left, top + kPlotHeight + 14, duration(lo), "start", "axis");
    svg.text(left + kPlotWidth, top + kPlotHeight + 14, duration(hi), "end", "axis");
    svg.text(left + kPlotWidth / 2, top + kPlotHeight + 14,
             std::to_string(r.sorted_ns.size()) + " calls, p50 " + duration(r.p50) + ", p99 " + duration(r.p99), "middle", "axis");
  }
  return svg.finish();
}

}  // namespace kernscope::html
