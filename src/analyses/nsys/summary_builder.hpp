// Builds the common nsys *_sum table: groups of duration samples, each with its trailing cells
// (name, style...), the standard statistics columns, sorted by total time descending. nsys's SQL
// sorts only on the total (plus, for kernels, count and name); ties keep the order of SQLite's
// GROUP BY, i.e. ascending group key, which callers give as `groups` order.
#pragma once

#include <string>
#include <vector>

#include "analyses/nsys/report_helpers.hpp"

namespace kernscope::report {

struct SummaryGroup {
  std::vector<std::int64_t> samples;
  std::vector<Cell> trailing;  // cells after StdDev, e.g. the name
  std::string tie_name;        // used only by kTotalCountName ordering
};

enum class SummaryOrder { kTotalDesc, kTotalDescCountName };

struct SummarySpec {
  std::string report;
  std::string title;
  std::string count_label;
  std::vector<Column> trailing_columns;
  SummaryOrder order = SummaryOrder::kTotalDesc;
};

Table build_summary(const SummarySpec& spec, std::vector<SummaryGroup> groups);

}  // namespace kernscope::report
