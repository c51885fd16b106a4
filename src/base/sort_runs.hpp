// Sorting lists that are mostly a few ascending runs already. A what-if graph lists each thread's
// calls in time order, then each table's operations in start order, so the replay's events and the
// graph's work lists are a handful of ascending runs: merging the runs costs about a pass per
// doubling of them, where std::sort paid n log n comparisons on every replay (most of a replay's
// instructions on the eager Llama trace).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kernscope {

// Sorts `values` by `less` (a strict weak order), finding its ascending runs and merging them in
// pairs (a natural merge sort). Stable: equal values keep their order, so with a total order the
// result is the one std::sort gives. Falls back to std::stable_sort where the runs are short (a
// list in no particular order).
template <class T, class Less>
void sort_by_runs(std::vector<T>& values, Less less) {
  const std::size_t n = values.size();
  std::vector<std::size_t> runs;  // where each ascending run begins
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 0 || less(values[i], values[i - 1])) runs.push_back(i);
  }
  if (runs.size() <= 1) return;
  if (runs.size() > n / 16 + 1) {
    std::stable_sort(values.begin(), values.end(), less);
    return;
  }
  const auto at = [&](std::size_t r) { return values.begin() + static_cast<std::ptrdiff_t>(r < runs.size() ? runs[r] : n); };
  while (runs.size() > 1) {
    std::vector<std::size_t> merged;
    merged.reserve(runs.size() / 2 + 1);
    for (std::size_t r = 0; r < runs.size(); r += 2) {
      merged.push_back(runs[r]);
      if (r + 1 < runs.size()) std::inplace_merge(at(r), at(r + 1), at(r + 2), less);
    }
    runs = std::move(merged);
  }
}

}  // namespace kernscope
