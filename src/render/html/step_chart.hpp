// Charts over a sequence of steps (x: step number, in order): one bar per step coloured by its
// kind with lines over the bars, and stacked bars (GPU busy under GPU idle). When there are more
// steps than the plot has pixels for, consecutive steps are drawn as one bar of their mean and the
// tooltip says which steps it covers.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "render/html/svg.hpp"

namespace kernscope::html {

struct StepBars {
  std::vector<double> values;       // one per step
  std::vector<std::string> colors;  // one per step
  std::vector<std::string> labels;  // one per step: what the tooltip names it
  std::vector<std::pair<std::string, std::string>> legend;  // name, colour
};

struct StepLine {
  std::string name, color;
  std::vector<double> values;  // one per step; NaN where it has no value
};

struct StepReference {
  std::string label, color;
  double value = 0;
};

struct StepLayer {
  std::string name, color;
  std::vector<double> values;  // one per step, stacked in the order of the layers
};

std::string step_bar_chart(const std::string& id, std::string_view description, const StepBars& bars,
                           const std::vector<StepLine>& lines, const std::vector<StepReference>& references,
                           const LabelFormat& value_format);

std::string stacked_step_chart(const std::string& id, std::string_view description, const std::vector<std::string>& labels,
                               const std::vector<StepLayer>& layers, const LabelFormat& value_format);

}  // namespace kernscope::html
