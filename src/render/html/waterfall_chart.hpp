// A waterfall: how one total becomes another, step by step. The first and last bars are the
// totals; each row between is a change floating from the running sum (red: more time, green: less).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernscope::html {

struct WaterfallStep {
  std::string label;  // the row (a class, a kernel), escaped when drawn
  double delta = 0;   // ns, signed
};

std::string waterfall_chart(const std::string& id, std::string_view description, const std::string& start_label, double start,
                            const std::vector<WaterfallStep>& steps, const std::string& end_label);

}  // namespace kernscope::html
