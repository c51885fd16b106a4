// Rows of one event table (start and end columns) found by time: the rows whose interval overlaps
// a window. The table is searched by binary search on its start column where that column is sorted
// (as exports write them), else through its rows sorted by start (built here, no copy of the
// columns). Where the search begins: the latest end of the rows before each block of 64 positions
// is kept, so a long interval early in the trace (a model load's synchronize) does not make every
// later window scan back to it. Read-only once built, so threads may share one.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope::report {

class RowsInStartOrder {
 public:
  RowsInStartOrder(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) : start_(&start), end_(&end) {
    if (!std::is_sorted(start.begin(), start.end())) {
      order_.resize(start.size());
      std::iota(order_.begin(), order_.end(), RowIndex{0});
      std::stable_sort(order_.begin(), order_.end(), [&](RowIndex x, RowIndex y) { return start[x] < start[y]; });
    }
    // latest_end_[b]: the latest end among positions [0, (b + 1) * kBlock).
    TimeNs latest = INT64_MIN;
    for (std::size_t p = 0; p < start.size(); ++p) {
      latest = std::max(latest, end[row(p)]);
      if ((p + 1) % kBlock == 0 || p + 1 == start.size()) latest_end_.push_back(latest);
    }
  }

  // Calls f(row) for every row with start < hi and end > lo, in start order.
  template <class F>
  void for_each_overlapping(TimeNs lo, TimeNs hi, F&& f) const {
    const auto& end = *end_;
    const std::size_t last = first_at(hi);
    // The first block holding a row that ends after lo: rows of earlier blocks all end by lo.
    const auto block = std::upper_bound(latest_end_.begin(), latest_end_.end(), lo) - latest_end_.begin();
    for (std::size_t p = static_cast<std::size_t>(block) * kBlock; p < last; ++p) {
      const RowIndex r = row(p);
      if (end[r] > lo) f(r);
    }
  }

 private:
  static constexpr std::size_t kBlock = 64;
  RowIndex row(std::size_t position) const {
    return order_.empty() ? static_cast<RowIndex>(position) : order_[position];
  }
  // The first position whose start is at least `t`.
  std::size_t first_at(TimeNs t) const {
    const auto& start = *start_;
    std::size_t lo = 0, hi = start.size();
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (start[row(mid)] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  const std::vector<TimeNs>* start_;
  const std::vector<TimeNs>* end_;
  std::vector<RowIndex> order_;     // empty: the start column is sorted
  std::vector<TimeNs> latest_end_;  // per block of positions, non-decreasing
};

}  // namespace kernscope::report
