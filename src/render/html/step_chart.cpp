#include "render/html/step_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "render/html/html_text.hpp"

namespace kernscope::html {
namespace {

constexpr double kLeft = 72, kRight = 940, kTop = 10, kPlotHeight = 220;
constexpr std::size_t kMaxBars = 600;  // about 1.4 px per bar on the 868 px plot

// Consecutive steps drawn as one bar: [first, last) of each bin.
std::vector<std::pair<std::size_t, std::size_t>> bins_of(std::size_t steps) {
  const std::size_t per_bin = std::max<std::size_t>(1, (steps + kMaxBars - 1) / kMaxBars);
  std::vector<std::pair<std::size_t, std::size_t>> bins;
  for (std::size_t first = 0; first < steps; first += per_bin) bins.push_back({first, std::min(steps, first + per_bin)});
  return bins;
}

// The mean of the values in [first, last) that are numbers; NaN when none is.
double mean_of(const std::vector<double>& values, std::pair<std::size_t, std::size_t> bin) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = bin.first; i < bin.second && i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    sum += values[i];
    ++n;
  }
  return n ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

std::string bin_name(const std::vector<std::string>& labels, std::pair<std::size_t, std::size_t> bin) {
  const auto label = [&](std::size_t i) { return i < labels.size() ? labels[i] : "step " + std::to_string(i + 1); };
  if (bin.second - bin.first == 1) return label(bin.first);
  return "steps " + std::to_string(bin.first + 1) + "-" + std::to_string(bin.second) + " (mean of " +
         std::to_string(bin.second - bin.first) + "), from " + label(bin.first);
}

struct Frame {
  Scale x, y;
  double bar_gap;
};

Frame draw_frame(Svg& svg, std::size_t steps, double max_value, const LabelFormat& value_format) {
  const Scale x = Scale::linear(0, static_cast<double>(std::max<std::size_t>(steps, 1)), kLeft, kRight);
  const Scale y = Scale::linear(0, nice_ceiling(max_value), kTop + kPlotHeight, kTop);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, kPlotHeight);
  svg.left_axis(y, kLeft, kRight, 5, value_format);
  // Step numbers are whole: at most one tick per step (a one-step chart read "0" at every tick),
  // and a tick between two steps is left unlabelled.
  const int ticks = static_cast<int>(std::clamp<std::size_t>(steps, 1, 10));
  svg.bottom_axis(x, kTop + kPlotHeight, kTop + kPlotHeight, ticks,
                  [](double v) { return std::abs(v - std::round(v)) < 1e-9 ? std::to_string(std::llround(v)) : std::string(); });
  svg.text(kRight, kTop + kPlotHeight + 30, "step", "end", "axis");
  const double bar_width = (kRight - kLeft) / static_cast<double>(std::min(steps, kMaxBars) + 0.0);
  return {x, y, bar_width > 4 ? 1.0 : 0.0};
}

double max_finite(double current, const std::vector<double>& values) {
  for (double v : values) {
    if (std::isfinite(v)) current = std::max(current, v);
  }
  return current;
}

}  // namespace

std::string step_bar_chart(const std::string& id, std::string_view description, const StepBars& bars,
                           const std::vector<StepLine>& lines, const std::vector<StepReference>& references,
                           const LabelFormat& value_format) {
  const std::size_t steps = bars.values.size();
  Svg svg(id, 960, 300, description);
  double max_value = max_finite(0, bars.values);
  for (const auto& l : lines) max_value = max_finite(max_value, l.values);
  for (const auto& r : references) max_value = std::max(max_value, r.value);
  const auto frame = draw_frame(svg, steps, max_value, value_format);
  const auto bins = bins_of(steps);
  for (const auto& bin : bins) {
    const double v = mean_of(bars.values, bin);
    if (std::isnan(v)) continue;
    const double x0 = frame.x(static_cast<double>(bin.first)), x1 = frame.x(static_cast<double>(bin.second));
    svg.rect(x0, frame.y(v), x1 - x0 - frame.bar_gap, frame.y(0) - frame.y(v), bars.colors.at(bin.first),
             bin_name(bars.labels, bin) + ": " + value_format(v));
  }
  std::vector<std::pair<std::string, std::string>> legend = bars.legend;
  for (const auto& l : lines) {
    // One polyline per run of steps that have a value.
    std::vector<std::pair<double, double>> run;
    for (const auto& bin : bins) {
      const double v = mean_of(l.values, bin);
      if (std::isnan(v)) {
        svg.polyline(run, l.color);
        run.clear();
        continue;
      }
      const double cx = frame.x((static_cast<double>(bin.first) + static_cast<double>(bin.second)) / 2);
      run.push_back({cx, frame.y(v)});
      if (bins.size() <= 60) svg.circle(cx, frame.y(v), 2.5, l.color, bin_name(bars.labels, bin) + ": " + l.name + " " + value_format(v));
    }
    svg.polyline(run, l.color);
    legend.push_back({l.name, l.color});
  }
  for (const auto& r : references) {
    svg.line(kLeft, frame.y(r.value), kRight, frame.y(r.value), r.color, 1, r.label + " " + value_format(r.value));
    svg.text(kRight - 4, frame.y(r.value) - 4, r.label + " " + value_format(r.value), "end", "axis");
  }
  svg.set_height(static_cast<int>(svg.legend(kLeft, kTop + kPlotHeight + 48, kRight, legend) + 4));
  return svg.finish();
}

std::string stacked_step_chart(const std::string& id, std::string_view description, const std::vector<std::string>& labels,
                               const std::vector<StepLayer>& layers, const LabelFormat& value_format) {
  const std::size_t steps = layers.empty() ? 0 : layers.front().values.size();
  Svg svg(id, 960, 300, description);
  const auto bins = bins_of(steps);
  // The highest stack, from the bins as drawn.
  double max_value = 0;
  for (const auto& bin : bins) {
    double total = 0;
    for (const auto& layer : layers) {
      const double v = mean_of(layer.values, bin);
      if (!std::isnan(v)) total += v;
    }
    max_value = std::max(max_value, total);
  }
  const auto frame = draw_frame(svg, steps, max_value, value_format);
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& layer : layers) legend.push_back({layer.name, layer.color});
  for (const auto& bin : bins) {
    const double x0 = frame.x(static_cast<double>(bin.first)), x1 = frame.x(static_cast<double>(bin.second));
    double base = 0;
    std::string tooltip = bin_name(labels, bin);
    for (const auto& layer : layers) {
      const double v = mean_of(layer.values, bin);
      if (!std::isnan(v)) tooltip += "; " + layer.name + " " + value_format(v);
    }
    for (const auto& layer : layers) {
      const double v = mean_of(layer.values, bin);
      if (std::isnan(v) || v <= 0) continue;
      svg.rect(x0, frame.y(base + v), x1 - x0 - frame.bar_gap, frame.y(base) - frame.y(base + v), layer.color, tooltip);
      base += v;
    }
  }
  svg.set_height(static_cast<int>(svg.legend(kLeft, kTop + kPlotHeight + 48, kRight, legend) + 4));
  return svg.finish();
}

}  // namespace kernscope::html
