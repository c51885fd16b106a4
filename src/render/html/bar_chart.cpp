#include "render/html/bar_chart.hpp"

#include <algorithm>

#include "render/html/html_text.hpp"

namespace kernscope::html {

std::string horizontal_bar_chart(const std::string& id, std::string_view description, const std::vector<Bar>& bars,
                                 const LabelFormat& axis_format) {
  constexpr double kLeft = 230, kRight = 850, kTop = 8, kRow = 22;
  const double plot_height = kRow * static_cast<double>(bars.size());
  const int height = static_cast<int>(kTop + plot_height + 30);
  double max = 0;
  for (const auto& b : bars) max = std::max(max, b.value);
  const Scale x = Scale::linear(0, nice_ceiling(max), kLeft, kRight);
  Svg svg(id, 960, height, description);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, plot_height);
  svg.bottom_axis(x, kTop + plot_height, kTop, 5, axis_format);
  double y = kTop;
  for (const auto& b : bars) {
    svg.text(kLeft - 8, y + 15, shortened(b.label, 30), "end", "label", b.label, b.label);
    svg.rect(kLeft, y + 3, x(b.value) - kLeft, kRow - 6, b.color, b.tooltip.empty() ? b.label : b.tooltip);
    svg.text(x(b.value) + 6, y + 15, b.value_text, "start", "axis");
    y += kRow;
  }
  return svg.finish();
}

}  // namespace kernscope::html
