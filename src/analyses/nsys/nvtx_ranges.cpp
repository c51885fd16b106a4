#include "analyses/nsys/nvtx_ranges.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace kernscope::report {

std::vector<IndexedRange> index_ranges(const Trace& trace) {
  const auto& n = trace.nvtx;
  // NVTX_EVENTS_MINMAXTS.max: the latest start or end among range events.
  TimeNs last = std::numeric_limits<TimeNs>::min();
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (!is_nvtx_range(n.event_type[i])) continue;
    last = std::max(last, n.start_ns[i]);
    if (n.end_ns[i] != kNoTime) last = std::max(last, n.end_ns[i]);
  }
  const NvtxDomainNames domains(trace);
  std::vector<IndexedRange> ranges;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (!is_nvtx_range(n.event_type[i]) || n.end_global_tid[i] != 0) continue;
    ranges.push_back({i, n.start_ns[i], n.end_ns[i] == kNoTime ? last : n.end_ns[i], n.global_tid[i],
                      domains.range_label(trace, i), is_nvtx_pushpop(n.event_type[i])});
  }
  return ranges;
}

void find_enclosing(const std::vector<IndexedRange>& ranges, const std::vector<Interval>& queries,
                    const std::function<void(std::size_t, std::size_t)>& found) {
  // Per thread, sweep queries by start; a range joins the active set once it has started and
  // leaves it once it ends before the current query starts (it cannot contain any later query).
  std::unordered_map<std::int64_t, std::vector<std::size_t>> ranges_by_tid, queries_by_tid;
  for (std::size_t r = 0; r < ranges.size(); ++r) ranges_by_tid[ranges[r].global_tid].push_back(r);
  for (std::size_t q = 0; q < queries.size(); ++q) queries_by_tid[queries[q].global_tid].push_back(q);
  for (auto& [tid, qs] : queries_by_tid) {
    auto it = ranges_by_tid.find(tid);
    if (it == ranges_by_tid.end()) continue;
    auto& rs = it->second;
    // Traces list events nearly in time order: check before sorting millions of indices.
    auto by_range_start = [&](std::size_t a, std::size_t b) { return ranges[a].start_ns < ranges[b].start_ns; };
    auto by_query_start = [&](std::size_t a, std::size_t b) { return queries[a].start_ns < queries[b].start_ns; };
    if (!std::is_sorted(rs.begin(), rs.end(), by_range_start)) std::stable_sort(rs.begin(), rs.end(), by_range_start);
    if (!std::is_sorted(qs.begin(), qs.end(), by_query_start)) std::stable_sort(qs.begin(), qs.end(), by_query_start);
    std::vector<std::size_t> active;
    std::size_t next = 0;
    for (std::size_t q : qs) {
      const auto& query = queries[q];
      while (next < rs.size() && ranges[rs[next]].start_ns <= query.start_ns) active.push_back(rs[next++]);
      std::erase_if(active, [&](std::size_t r) { return ranges[r].end_ns < query.start_ns; });
      for (std::size_t r : active) {
        if (ranges[r].end_ns >= query.end_ns) found(q, r);
      }
    }
  }
}

}  // namespace kernscope::report
