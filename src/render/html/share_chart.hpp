// Stacked 100 % bars: how one whole (a phase's kernel time) splits into parts (operation classes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernscope::html {

struct ShareSegment {
  std::string name;
  double share = 0;  // of the row's whole, 0..1
  std::string color;
};

struct ShareRow {
  std::string label;
  std::vector<ShareSegment> segments;
};

std::string stacked_share_chart(const std::string& id, std::string_view description, const std::vector<ShareRow>& rows);

}  // namespace kernscope::html
