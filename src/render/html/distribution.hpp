// Duration distributions of the kernels that take the most time, drawn two ways: one row per
// kernel on a shared log axis (box p25-p75, median, p99, max: where its tail reaches), and a
// histogram per kernel over its own range (the shape: one mode, two, a long tail).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/tail.hpp"

namespace kernscope::html {

// DurationDistribution (analyses/tail.hpp) is computed there and drawn here.

std::string tail_box_chart(const std::string& id, std::string_view description, const std::vector<DurationDistribution>& rows);

std::string histogram_grid(const std::string& id, std::string_view description, const std::vector<DurationDistribution>& rows);

}  // namespace kernscope::html
