#include "readers/ncu/ncu_join.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace kernscope::readers::ncu {
namespace {

bool same_dims(const NcuKernel& k, const KernelColumns& kc, RowIndex row) {
  // A trace loaded without its kernels' launch columns (a plan that reads only what summaries
  // need) has no grid/block to compare: the join then goes by name and order alone.
  if (row >= kc.grid_x.size() || row >= kc.block_x.size()) return true;
  if (k.grid && ((*k.grid)[0] != kc.grid_x[row] || (*k.grid)[1] != kc.grid_y[row] || (*k.grid)[2] != kc.grid_z[row])) return false;
  if (k.block && ((*k.block)[0] != kc.block_x[row] || (*k.block)[1] != kc.block_y[row] || (*k.block)[2] != kc.block_z[row])) return false;
  return true;
}

}  // namespace

NcuJoin join_ncu_kernels(const NcuReport& report, const Trace& trace) {
  NcuJoin join;
  join.trace_row.assign(report.kernels.size(), std::nullopt);
  const KernelColumns& kc = trace.kernels;
  std::vector<RowIndex> order(kc.size());
  std::iota(order.begin(), order.end(), RowIndex{0});
  std::ranges::stable_sort(order, [&](RowIndex a, RowIndex b) { return kc.start_ns[a] < kc.start_ns[b]; });
  // Launches of each function name in time order, and how far each name has been matched.
  std::map<std::string, std::vector<RowIndex>, std::less<>> launches;
  for (const RowIndex row : order) {
    std::string_view name = row < kc.short_name.size() ? trace.strings.get(kc.short_name[row]) : std::string_view{};
    if (name.empty()) name = trace.strings.get(kc.demangled_name[row]);
    launches[std::string(name)].push_back(row);
  }
  std::map<std::string, std::size_t> cursor;
  std::map<std::string, std::size_t> skipped_for_dims, unmatched;
  for (std::size_t i = 0; i < report.kernels.size(); ++i) {
    const NcuKernel& k = report.kernels[i];
    const auto it = launches.find(k.join_name);
    if (it == launches.end()) {
      ++unmatched[k.join_name];
      continue;
    }
    std::size_t& next = cursor[k.join_name];
    std::size_t candidate = next;
    while (candidate < it->second.size() && !same_dims(k, kc, it->second[candidate])) ++candidate;
    if (candidate == it->second.size()) {
      ++unmatched[k.join_name];
      continue;
    }
    skipped_for_dims[k.join_name] += candidate - next;
    join.trace_row[i] = it->second[candidate];
    next = candidate + 1;
    ++join.matched;
  }
  for (const auto& [name, count] : unmatched) {
    const auto it = launches.find(name);
    join.notes.push_back({"profiled_launches_unmatched", NoteSeverity::kInfo,
                          "ncu: " + std::to_string(count) + " profiled launch(es) of " + name + " found no kernel in the trace" +
                              (it == launches.end() ? " (no kernel of that name)"
                                                    : " (the trace has " + std::to_string(it->second.size()) +
                                                          " of that name; grid/block differ or ncu profiled more)"),
                          static_cast<std::int64_t>(count)});
  }
  for (const auto& [name, count] : skipped_for_dims) {
    if (count > 0) {
      join.notes.push_back({"trace_launches_passed_over", NoteSeverity::kInfo,
                            "ncu: " + std::to_string(count) + " launch(es) of " + name +
                                " in the trace passed over: their grid/block differ from the next profiled launch",
                            static_cast<std::int64_t>(count)});
    }
  }
  return join;
}

}  // namespace kernscope::readers::ncu
