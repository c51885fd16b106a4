#include "analyses/nsys/summary_builder.hpp"

#include <algorithm>
#include <numeric>

namespace kernscope::report {

Table build_summary(const SummarySpec& spec, std::vector<SummaryGroup> groups) {
  struct Computed {
    SampleStats stats;
    std::size_t group;
  };
  std::vector<Computed> rows;
  rows.reserve(groups.size());
  std::int64_t grand_total = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    auto stats = compute_stats(groups[g].samples);
    if (!stats) continue;
    grand_total += stats->sum;
    rows.push_back({*stats, g});
  }
  if (spec.order == SummaryOrder::kTotalDescCountName) {
    std::stable_sort(rows.begin(), rows.end(), [&](const Computed& a, const Computed& b) {
      if (a.stats.sum != b.stats.sum) return a.stats.sum > b.stats.sum;
      if (a.stats.count != b.stats.count) return a.stats.count < b.stats.count;
      return groups[a.group].tie_name < groups[b.group].tie_name;
    });
  } else {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Computed& a, const Computed& b) { return a.stats.sum > b.stats.sum; });
  }
  Table table;
  table.report = spec.report;
  table.title = spec.title;
  table.columns = summary_columns(spec.count_label);
  table.columns.insert(table.columns.end(), spec.trailing_columns.begin(), spec.trailing_columns.end());
  table.rows.reserve(rows.size());
  for (const auto& r : rows) {
    std::vector<Cell> row;
    row.reserve(table.columns.size());
    append_summary_cells(row, r.stats, grand_total);
    for (auto& cell : groups[r.group].trailing) row.push_back(std::move(cell));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace kernscope::report
