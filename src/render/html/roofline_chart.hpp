// A log-log roofline: arithmetic intensity (FLOP/B) across, achieved FLOP/s up; the memory roof
// (bandwidth x intensity) and one flat compute roof per precision; one dot per row of work.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernscope::html {

struct RooflinePoint {
  std::string name;
  double intensity = 0;    // FLOP per byte, > 0
  double flops_per_s = 0;  // achieved, > 0
  std::string color;
  std::string tooltip;
};

struct ComputeRoof {
  std::string label;  // "bf16 989 TFLOP/s"
  double flops_per_s = 0;
};

std::string roofline_chart(const std::string& id, std::string_view description, double bandwidth_bytes_per_s,
                           const std::vector<ComputeRoof>& roofs, const std::vector<RooflinePoint>& points);

}  // namespace kernscope::html
