// Horizontal bars from zero, one row per item (operation classes, later a diff's classes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "render/html/svg.hpp"

namespace kernscope::html {

struct Bar {
  std::string label;       // left of the bar (escaped, cut to fit; the whole label in the tooltip)
  double value = 0;        // >= 0
  std::string color;
  std::string value_text;  // right of the bar
  std::string tooltip;
};

std::string horizontal_bar_chart(const std::string& id, std::string_view description, const std::vector<Bar>& bars,
                                 const LabelFormat& axis_format);

}  // namespace kernscope::html
