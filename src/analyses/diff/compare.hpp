// kernscope compare: N traces (engines, configs, batch sizes) side by side, one column each,
// named by the user's labels: step figures and GPU time by operation class.
#pragma once

#include <vector>

#include "analyses/diff/diff_figures.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/table.hpp"

namespace kernscope {

struct Comparison {
  std::vector<std::string> labels;
  Table steps;    // "compare_steps": Metric, then one column per trace (ns; "Steps measured" counts)
  Table classes;  // "compare_classes": Class, then each trace's total GPU time in the class (ns)
  std::vector<Note> notes;  // traces of different GPUs
};

Comparison compare_sides(const std::vector<SideFigures>& sides);

}  // namespace kernscope
