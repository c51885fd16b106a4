#include "render/html/svg.hpp"

#include <algorithm>
#include <cmath>

#include "render/html/html_text.hpp"

namespace kernscope::html {
namespace {

// A 1-2-5 step giving about `count` intervals over `span`.
double tick_step(double span, int count) {
  if (span <= 0 || count <= 0) return 1;
  const double raw = span / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

std::string title_element(std::string_view tooltip) {
  return tooltip.empty() ? std::string() : "<title>" + escape(tooltip) + "</title>";
}

// Close an element: with its tooltip as a child, or self-closing.
// Built piece by piece: GCC 12 warns (-Wrestrict, a false positive) on ">" + string&&.
std::string closed(std::string_view tag, std::string_view tooltip) {
  if (tooltip.empty()) return "/>";
  std::string out = ">";
  out += title_element(tooltip);
  out += "</";
  out += tag;
  out += '>';
  return out;
}

}  // namespace

Scale Scale::linear(double d0, double d1, double r0, double r1) {
  if (d1 <= d0) d1 = d0 + 1;
  return Scale(d0, d1, r0, r1, false);
}

Scale Scale::log10(double d0, double d1, double r0, double r1) {
  d0 = std::max(d0, 1e-9);
  d1 = std::max(d1, d0 * 10);
  return Scale(d0, d1, r0, r1, true);
}

double Scale::operator()(double value) const {
  double t;
  if (log_) {
    value = std::clamp(value, d0_, d1_);
    t = (std::log10(value) - std::log10(d0_)) / (std::log10(d1_) - std::log10(d0_));
  } else {
    t = (value - d0_) / (d1_ - d0_);
  }
  return r0_ + t * (r1_ - r0_);
}

std::vector<double> Scale::ticks(int count) const {
  std::vector<double> out;
  if (log_) {
    for (double p = std::ceil(std::log10(d0_) - 1e-9); p <= std::log10(d1_) + 1e-9; p += 1) out.push_back(std::pow(10.0, p));
    return out;
  }
  const double step = tick_step(d1_ - d0_, count);
  for (double v = std::ceil(d0_ / step) * step; v <= d1_ + step * 1e-9; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

double nice_ceiling(double max) {
  if (!(max > 0)) return 1;
  const double step = tick_step(max, 5);
  return std::ceil(max / step - 1e-9) * step;
}

std::string palette_color(std::size_t index) {
  static const char* const colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#2f9e9e"};
  return colors[index % std::size(colors)];
}

std::string class_color(std::string_view op_class) {
  // Hand-picked so the classes that share a trace (matrix products, attention, elementwise, copies)
  // differ in hue; every colour is saturated enough to count as a drawn mark.
  static const std::pair<std::string_view, const char*> colors[] = {
      {"gemm", "#1f77b4"},           {"gemv", "#ff7f0e"},           {"quantized_gemm", "#9edae5"},
      {"moe_gemm", "#393b79"},       {"convolution", "#637939"},    {"attention_prefill", "#d62728"},
      {"attention_decode", "#9467bd"}, {"attention", "#e377c2"},    {"splitkv_reduce", "#8c564b"},
      {"kv_cache_write", "#bcbd22"}, {"norm", "#2ca02c"},           {"softmax", "#98df8a"},
      {"rope", "#a55194"},           {"activation", "#ffbb78"},     {"pooling", "#6b6ecf"},
      {"embedding", "#b5cf6b"},      {"quantization", "#843c39"},   {"moe_routing", "#5254a3"},
      {"sampling", "#ad494a"},       {"communication", "#31a354"},  {"copy_cast", "#aec7e8"},
      {"elementwise", "#16a085"},    {"reduction", "#7b4173"},      {"backward", "#cedb9c"},
      {"optimizer", "#e7969c"},      {"memcpy", "#f0c419"},         {"memset", "#d6616b"},
      {"other", "#c7a17a"}};
  for (const auto& [name, color] : colors) {
    if (name == op_class) return color;
  }
  std::size_t hash = 0;  // a class from a user's --rules file
  for (unsigned char c : op_class) hash = hash * 31 + c;
  return palette_color(hash);
}

std::string coordinate(double value) {
  if (!std::isfinite(value)) value = 0;
  std::string s = fixed(std::round(value * 10) / 10, 1);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

Svg::Svg(std::string id, int width, int height, std::string_view description)
    : id_(std::move(id)), description_(description), width_(width), height_(height) {}

Svg& Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view tooltip, std::string_view data_name) {
  body_ += "<rect x=\"" + coordinate(x) + "\" y=\"" + coordinate(y) + "\" width=\"" + coordinate(std::max(w, 0.0)) +
           "\" height=\"" + coordinate(std::max(h, 0.0)) + "\" fill=\"" + std::string(fill) + "\"";
  if (!data_name.empty()) body_ += " data-name=\"" + escape(data_name) + "\"";
  body_ += closed("rect", tooltip);
  return *this;
}

Svg& Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width, std::string_view tooltip) {
  body_ += "<line x1=\"" + coordinate(x1) + "\" y1=\"" + coordinate(y1) + "\" x2=\"" + coordinate(x2) + "\" y2=\"" +
           coordinate(y2) + "\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coordinate(width) + "\"" +
           closed("line", tooltip);
  return *this;
}

Svg& Svg::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width) {
  if (points.empty()) return *this;
  body_ += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coordinate(width) + "\" points=\"";
  for (const auto& [x, y] : points) body_ += coordinate(x) + "," + coordinate(y) + " ";
  body_.back() = '"';
  body_ += "/>";
  return *this;
}

Svg& Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip) {
  body_ += "<circle cx=\"" + coordinate(cx) + "\" cy=\"" + coordinate(cy) + "\" r=\"" + coordinate(r) + "\" fill=\"" +
           std::string(fill) + "\"" + closed("circle", tooltip);
  return *this;
}

Svg& Svg::text(double x, double y, std::string_view content, std::string_view anchor, std::string_view css_class,
               std::string_view tooltip, std::string_view data_name) {
  body_ += "<text x=\"" + coordinate(x) + "\" y=\"" + coordinate(y) + "\" text-anchor=\"" + std::string(anchor) + "\" class=\"" +
           std::string(css_class) + "\"";
  if (!data_name.empty()) body_ += " data-name=\"" + escape(data_name) + "\"";
  body_ += '>';  // not ">" + string&& (see closed())
  body_ += title_element(tooltip);
  body_ += escape(content);
  body_ += "</text>";
  return *this;
}

Svg& Svg::plot_frame(double x, double y, double w, double h) {
  body_ += "<rect class=\"plot-frame\" x=\"" + coordinate(x) + "\" y=\"" + coordinate(y) + "\" width=\"" + coordinate(w) +
           "\" height=\"" + coordinate(h) + "\" fill=\"none\"/>";
  return *this;
}

Svg& Svg::bottom_axis(const Scale& scale, double y, double grid_top, int ticks, const LabelFormat& format) {
  for (double v : scale.ticks(ticks)) {
    const double x = scale(v);
    line(x, grid_top, x, y, "#e4e4e4");
    line(x, y, x, y + 4, "#777");
    text(x, y + 16, format(v), "middle", "axis");
  }
  line(scale(scale.domain_min()), y, scale(scale.domain_max()), y, "#777");
  return *this;
}

Svg& Svg::left_axis(const Scale& scale, double x, double grid_right, int ticks, const LabelFormat& format) {
  for (double v : scale.ticks(ticks)) {
    const double y = scale(v);
    line(x, y, grid_right, y, "#e4e4e4");
    line(x - 4, y, x, y, "#777");
    text(x - 6, y + 4, format(v), "end", "axis");
  }
  line(x, scale(scale.domain_min()), x, scale(scale.domain_max()), "#777");
  return *this;
}

double Svg::legend(double x, double y, double right, const std::vector<std::pair<std::string, std::string>>& name_colors) {
  const double left = x;
  for (const auto& [name, color] : name_colors) {
    const double width = 24 + 7.0 * static_cast<double>(name.size());
    if (x > left && x + width > right) {
      x = left;
      y += 18;
    }
    rect(x, y - 9, 10, 10, color);
    text(x + 14, y, name, "start", "axis");
    x += width;
  }
  return y + 8;
}

std::string Svg::finish() const {
  return "<svg class=\"chart\" id=\"" + escape(id_) + "\" width=\"" + std::to_string(width_) +
         "\" height=\"" + std::to_string(height_) + "\" viewBox=\"0 0 " + std::to_string(width_) + " " + std::to_string(height_) +
         "\" role=\"img\" aria-label=\"" + escape(description_) + "\">" + body_ + "</svg>";
}

}  // namespace kernscope::html
