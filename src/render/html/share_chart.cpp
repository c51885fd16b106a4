#include "render/html/share_chart.hpp"

#include <algorithm>

#include "render/html/html_text.hpp"
#include "render/html/svg.hpp"

namespace kernscope::html {

std::string stacked_share_chart(const std::string& id, std::string_view description, const std::vector<ShareRow>& rows) {
  // Labels are group names with their phase and count (":measure:decode_step [decode] x64"): room
  // for about 34 characters, longer ones shortened with the whole label on hover.
  constexpr double kLeft = 230, kRight = 900, kTop = 8, kRow = 30;
  const double plot_height = kRow * static_cast<double>(rows.size());
  const int height = static_cast<int>(kTop + plot_height + 52);
  const Scale x = Scale::linear(0, 1, kLeft, kRight);
  Svg svg(id, 960, height, description);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, plot_height);
  svg.bottom_axis(x, kTop + plot_height, kTop, 5, [](double v) { return percent(v, 0); });
  // One legend entry per part, in the order parts first appear.
  std::vector<std::pair<std::string, std::string>> legend;
  double y = kTop;
  for (const auto& row : rows) {
    svg.text(kLeft - 8, y + 19, shortened(row.label, 34), "end", "label", row.label);
    double start = 0;
    for (const auto& s : row.segments) {
      const double share = std::clamp(s.share, 0.0, 1.0 - start);
      svg.rect(x(start), y + 4, x(start + share) - x(start), kRow - 8, s.color, row.label + ": " + s.name + " " + percent(s.share));
      start += share;
      if (std::none_of(legend.begin(), legend.end(), [&](const auto& e) { return e.first == s.name; })) legend.push_back({s.name, s.color});
    }
    y += kRow;
  }
  svg.set_height(static_cast<int>(svg.legend(kLeft, kTop + plot_height + 44, kRight, legend) + 4));
  return svg.finish();
}

}  // namespace kernscope::html
