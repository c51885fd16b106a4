// NVTX ranges as nsys's projection reports index them (its NVTX_EVENTS_RIDX): every push/pop and
// start/end range that ended on its own thread, an unclosed range ending at the last NVTX
// timestamp, and a sweep that finds, for intervals on a thread, the ranges that contain them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/nvtx_names.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::report {

struct IndexedRange {
  RowIndex row;  // NVTX row (nsys's rangeId order)
  TimeNs start_ns;
  TimeNs end_ns;
  std::int64_t global_tid;
  std::string name;   // "domain:text"
  bool pushpop;
};

std::vector<IndexedRange> index_ranges(const Trace& trace);

struct Interval {
  std::int64_t global_tid;
  TimeNs start_ns;
  TimeNs end_ns;
};

// Calls found(query_index, range_index) for every range on the query's thread with
// range.start <= query.start and range.end >= query.end.
void find_enclosing(const std::vector<IndexedRange>& ranges, const std::vector<Interval>& queries,
                    const std::function<void(std::size_t, std::size_t)>& found);

}  // namespace kernscope::report
