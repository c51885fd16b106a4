// The drawing primitives every chart of the HTML pages uses: scales, nice ticks, colours and an
// inline-SVG builder. Charts are <svg class="chart" id=...>; each plot area is a transparent
// <rect class="plot-frame"> holding only data marks in colour (axes, grid and text are grey), which
// is what the headless-browser test measures to know a plot was drawn.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kernscope::html {

// Data values to pixels along one axis, linear or base-10 logarithmic.
class Scale {
 public:
  static Scale linear(double d0, double d1, double r0, double r1);
  static Scale log10(double d0, double d1, double r0, double r1);  // d0, d1 > 0 (clamped)
  double operator()(double value) const;
  // About `count` round values inside the domain (1-2-5 steps; powers of ten for log scales).
  std::vector<double> ticks(int count) const;
  double domain_min() const { return d0_; }
  double domain_max() const { return d1_; }

 private:
  Scale(double d0, double d1, double r0, double r1, bool log) : d0_(d0), d1_(d1), r0_(r0), r1_(r1), log_(log) {}
  double d0_, d1_, r0_, r1_;
  bool log_;
};

// The upper end of a linear axis that starts at 0: `max` rounded up to a 1-2-5 step.
double nice_ceiling(double max);

// Colours: a categorical palette, and one fixed colour per operation class (the same class has the
// same colour on every page, so two reports compare at a glance).
std::string palette_color(std::size_t index);
std::string class_color(std::string_view op_class);

using LabelFormat = std::function<std::string(double)>;

class Svg {
 public:
  Svg(std::string id, int width, int height, std::string_view description);

  // `data_name`: a data-name attribute, for readers of the page (tests) that need the exact name.
  Svg& rect(double x, double y, double w, double h, std::string_view fill, std::string_view tooltip = {},
            std::string_view data_name = {});
  Svg& line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view tooltip = {});
  Svg& polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width = 1.5);
  Svg& circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip = {});
  // Text is escaped here; `css_class` picks a style of the page ("label", "axis", "title").
  Svg& text(double x, double y, std::string_view text, std::string_view anchor = "start", std::string_view css_class = "label",
            std::string_view tooltip = {}, std::string_view data_name = {});
  // The plot area (see the header comment): drawn first, under the marks.
  Svg& plot_frame(double x, double y, double w, double h);
  // Axis lines, ticks, grid lines across the plot and tick labels.
  Svg& bottom_axis(const Scale& scale, double y, double grid_top, int ticks, const LabelFormat& format);
  Svg& left_axis(const Scale& scale, double x, double grid_right, int ticks, const LabelFormat& format);
  // A legend from (x, y): a swatch and a name per entry, wrapped before `right`. Returns the y
  // below its last line.
  double legend(double x, double y, double right, const std::vector<std::pair<std::string, std::string>>& name_colors);
  // Charts whose height depends on what they drew (a wrapped legend) set it when done.
  void set_height(int height) { height_ = height; }

  std::string finish() const;

 private:
  std::string id_, description_;
  int width_, height_;
  std::string body_;
};

// Plain numbers for SVG coordinates: one decimal, no trailing zeros.
std::string coordinate(double value);

}  // namespace kernscope::html
