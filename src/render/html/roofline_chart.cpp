#include "render/html/roofline_chart.hpp"

#include <algorithm>
#include <cmath>

#include "render/html/html_text.hpp"
#include "render/html/svg.hpp"

namespace kernscope::html {
namespace {

// 1e12 -> "1 T", 1e9 -> "1 G": the axes' decades.
std::string si(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return fixed(v, v < 10 && v != std::floor(v) ? 1 : 0) + " " + units[i];
}

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

}  // namespace

std::string roofline_chart(const std::string& id, std::string_view description, double bandwidth, const std::vector<ComputeRoof>& roofs,
                           const std::vector<RooflinePoint>& points) {
  constexpr double kLeft = 80, kRight = 900, kTop = 12, kPlotHeight = 380;
  double x_lo = 1, x_hi = 100, y_lo = 1e12, y_hi = 1e12;
  for (const auto& r : roofs) {
    y_hi = std::max(y_hi, r.flops_per_s);
    if (bandwidth > 0) x_hi = std::max(x_hi, 4 * r.flops_per_s / bandwidth);  // past the ridge point
  }
  for (const auto& p : points) {
    x_lo = std::min(x_lo, p.intensity);
    x_hi = std::max(x_hi, p.intensity);
    y_lo = std::min(y_lo, p.flops_per_s);
    y_hi = std::max(y_hi, p.flops_per_s);
  }
  const Scale x = Scale::log10(decade_below(x_lo), decade_above(x_hi), kLeft, kRight);
  const Scale y = Scale::log10(decade_below(y_lo), decade_above(y_hi), kTop + kPlotHeight, kTop);
  Svg svg(id, 960, 460, description);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, kPlotHeight);
  svg.bottom_axis(x, kTop + kPlotHeight, kTop, 0, [](double v) { return si(v); });
  svg.left_axis(y, kLeft, kRight, 0, [](double v) { return si(v); });
  svg.text(kRight, kTop + kPlotHeight + 32, "arithmetic intensity (FLOP/byte)", "end", "axis");
  svg.text(kLeft - 70, kTop - 2, "FLOP/s", "start", "axis");
  const char* const roof_color = "#555";  // grey: reference lines, not data (the browser test counts colour)
  for (const auto& r : roofs) {
    // Flat from the ridge point (where bandwidth x intensity reaches the peak) to the right.
    const double ridge = bandwidth > 0 ? r.flops_per_s / bandwidth : x.domain_min();
    const double from = std::clamp(ridge, x.domain_min(), x.domain_max());
    svg.line(x(from), y(r.flops_per_s), kRight, y(r.flops_per_s), roof_color, 2, r.label);
    svg.text(kRight - 4, y(r.flops_per_s) - 5, r.label, "end", "axis");
  }
  if (bandwidth > 0 && !roofs.empty()) {
    double top = 0;
    for (const auto& r : roofs) top = std::max(top, r.flops_per_s);
    const double a = std::max(x.domain_min(), y.domain_min() / bandwidth), b = std::min(top / bandwidth, x.domain_max());
    if (a < b) {
      svg.line(x(a), y(bandwidth * a), x(b), y(bandwidth * b), roof_color, 2, "memory roof " + si(bandwidth) + "B/s");
      svg.text(x(a) + 6, y(bandwidth * a) - 8, "memory " + si(bandwidth) + "B/s", "start", "axis");
    }
  }
  for (const auto& p : points) {
    svg.circle(x(p.intensity), y(p.flops_per_s), 5, p.color, p.tooltip.empty() ? p.name : p.tooltip);
  }
  return svg.finish();
}

}  // namespace kernscope::html
