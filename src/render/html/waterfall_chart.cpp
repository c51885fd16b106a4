#include "render/html/waterfall_chart.hpp"

#include <algorithm>
#include <cmath>

#include "render/html/html_text.hpp"
#include "render/html/svg.hpp"

namespace kernscope::html {
namespace {

// The sign appended, not prefixed to a temporary: GCC 12 warns (-Wrestrict, a false positive) on "+" + string&&.
std::string signed_duration(double ns) {
  std::string out = ns > 0 ? "+" : ns < 0 ? "-" : "";
  out += duration(std::fabs(ns));
  return out;
}

}  // namespace

std::string waterfall_chart(const std::string& id, std::string_view description, const std::string& start_label, double start,
                            const std::vector<WaterfallStep>& steps, const std::string& end_label) {
  constexpr double kLeft = 300, kRight = 800, kTop = 8, kRow = 22;
  const char* const total_color = "#4e79a7";
  const char* const more_color = "#e15759";
  const char* const less_color = "#59a14f";
  // The axis spans the running sums (not from zero): the changes are often small beside the totals.
  double lo = start, hi = start, running = start;
  for (const auto& s : steps) {
    running += s.delta;
    lo = std::min(lo, running);
    hi = std::max(hi, running);
  }
  const double end = running;
  const double margin = std::max((hi - lo) * 0.15, std::max(std::fabs(hi), 1.0) * 0.005);
  const double axis_lo = std::max(0.0, lo - margin);
  const Scale x = Scale::linear(axis_lo, hi + margin, kLeft, kRight);
  const double plot_height = kRow * static_cast<double>(steps.size() + 2);
  Svg svg(id, 960, static_cast<int>(kTop + plot_height + 30), description);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, plot_height);
  svg.bottom_axis(x, kTop + plot_height, kTop, 5, [](double v) { return duration(v); });
  double y = kTop;
  auto total_row = [&](const std::string& label, double value) {
    svg.text(kLeft - 8, y + 15, shortened(label, 40), "end", "label", label, label);
    svg.rect(kLeft, y + 3, x(value) - kLeft, kRow - 6, total_color, label + ": " + duration(value));
    svg.text(x(value) + 6, y + 15, duration(value), "start", "axis");
    y += kRow;
  };
  total_row(start_label, start);
  running = start;
  for (const auto& s : steps) {
    const double from = running, to = running + s.delta;
    const double x0 = x(std::min(from, to)), x1 = x(std::max(from, to));
    const std::string change = signed_duration(s.delta) + (start > 0 ? " (" + (s.delta >= 0 ? std::string("+") : std::string()) +
                                                                           fixed(100 * s.delta / start, 2) + " % of " + start_label + ")"
                                                                     : "");
    svg.text(kLeft - 8, y + 15, shortened(s.label, 40), "end", "label", s.label, s.label);
    svg.rect(x0, y + 3, std::max(x1 - x0, 1.5), kRow - 6, s.delta > 0 ? more_color : less_color, s.label + ": " + change);
    svg.text(std::max(x0, x1) + 6, y + 15, signed_duration(s.delta), "start", "axis");
    running = to;
    y += kRow;
  }
  total_row(end_label, end);
  if (axis_lo > 0) svg.text(kLeft, kTop + plot_height + 30, "(axis starts at " + duration(axis_lo) + ")", "start", "axis");
  return svg.finish();
}

}  // namespace kernscope::html
