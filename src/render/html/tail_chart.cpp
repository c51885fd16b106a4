#include <algorithm>
#include <cmath>

#include "render/html/distribution.hpp"
#include "render/html/html_text.hpp"
#include "render/html/svg.hpp"

namespace kernscope::html {

std::string tail_box_chart(const std::string& id, std::string_view description, const std::vector<DurationDistribution>& rows) {
  constexpr double kLeft = 300, kRight = 930, kTop = 8, kRow = 24;
  const char* const box_color = "#4e79a7";
  const char* const p99_color = "#f28e2b";
  const char* const max_color = "#e15759";
  double lo = 0, hi = 0;
  for (const auto& r : rows) {
    const double min = static_cast<double>(std::max<std::int64_t>(r.sorted_ns.front(), 1));
    const double max = static_cast<double>(std::max<std::int64_t>(r.sorted_ns.back(), 1));
    lo = lo == 0 ? min : std::min(lo, min);
    hi = std::max(hi, max);
  }
  const double plot_height = kRow * static_cast<double>(rows.size());
  // The axis spans whole decades around the data so the ticks are round.
  const Scale x = Scale::log10(std::pow(10.0, std::floor(std::log10(std::max(lo, 1.0)))),
                               std::pow(10.0, std::ceil(std::log10(std::max(hi, 10.0)))), kLeft, kRight);
  Svg svg(id, 960, 300, description);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, plot_height);
  svg.bottom_axis(x, kTop + plot_height, kTop, 0, [](double v) { return duration(v); });
  double y = kTop;
  for (const auto& r : rows) {
    const double mid = y + kRow / 2;
    const auto min = static_cast<double>(r.sorted_ns.front()), max = static_cast<double>(r.sorted_ns.back());
    const std::string summary = r.name + "\n" + std::to_string(r.sorted_ns.size()) + " calls; min " + duration(min) + ", p25 " +
                                duration(r.p25) + ", p50 " + duration(r.p50) + ", p75 " + duration(r.p75) + ", p95 " +
                                duration(r.p95) + ", p99 " + duration(r.p99) + ", max " + duration(max);
    svg.text(kLeft - 8, mid + 4, shortened(r.name, 42), "end", "label", r.name, r.name);
    svg.line(x(min), mid, x(r.p99), mid, box_color, 1.5, summary);
    svg.rect(x(r.p25), mid - 7, std::max(x(r.p75) - x(r.p25), 2.0), 14, box_color, summary);
    svg.line(x(r.p50), mid - 8, x(r.p50), mid + 8, "#1b2a3a", 2, summary);
    svg.line(x(r.p99), mid - 6, x(r.p99), mid + 6, p99_color, 2.5, "p99 " + duration(r.p99));
    svg.circle(x(max), mid, 4, max_color, "max " + duration(max) + " (" + fixed(r.p50 > 0 ? max / r.p50 : 0, 1) + "x p50)");
    y += kRow;
  }
  const double bottom = svg.legend(kLeft, kTop + plot_height + 44, kRight,
                                   {{"p25-p75 (line: min to p99)", box_color}, {"p50", "#1b2a3a"}, {"p99", p99_color}, {"max", max_color}});
  svg.set_height(static_cast<int>(bottom + 4));
  return svg.finish();
}

}  // namespace kernscope::html
