#include "readers/nsys_sqlite/scheduling_events.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kernscope::nsys {

Result<void> read_scheduling_events(const Database& db, const std::set<std::string>& tables, Trace& trace) {
  if (!tables.contains("SCHED_EVENTS") || trace.thread_cpu.size() > 0 || trace.api_calls.size() == 0) return {};
  // The threads that made CUDA calls (calls come in long runs of one thread: one insert per run).
  std::unordered_set<std::int64_t> calling;
  const auto& tids = trace.api_calls.global_tid;
  for (std::size_t i = 0; i < tids.size(); ++i) {
    if (i == 0 || tids[i] != tids[i - 1]) calling.insert(tids[i]);
  }
  const auto unreadable = [&](const std::string& why) {
    trace.note("sched_events_unreadable", NoteSeverity::kError, "SCHED_EVENTS unreadable (" + why + "): threads' CPU time between CUDA calls not known");
    return Result<void>{};
  };
  auto stmt = db.prepare("SELECT globalTid, start, isSchedIn FROM SCHED_EVENTS WHERE globalTid IS NOT NULL AND start IS NOT NULL AND isSchedIn IS NOT NULL");
  if (!stmt) return unreadable(stmt.error().message);
  std::unordered_map<std::int64_t, std::vector<std::pair<TimeNs, bool>>> switches;  // per thread: time, switched in
  while (true) {
    auto more = stmt->step();
    if (!more) return unreadable(more.error().message);
    if (!*more) break;
    const std::int64_t tid = stmt->int64(0);
    if (calling.contains(tid)) switches[tid].push_back({stmt->int64(1), stmt->int64(2) != 0});
  }
  std::vector<std::int64_t> threads;
  for (const auto& [tid, s] : switches) threads.push_back(tid);
  std::sort(threads.begin(), threads.end());
  auto& out = trace.thread_cpu;
  for (std::int64_t tid : threads) {
    auto& s = switches[tid];
    std::stable_sort(s.begin(), s.end(), [](auto& a, auto& b) { return a.first < b.first; });
    // A stretch from each switch to the next one of the other kind (a repeated switch, as when
    // events of two CPUs interleave, changes nothing).
    std::size_t from = 0;
    for (std::size_t i = 1; i <= s.size(); ++i) {
      if (i < s.size() && s[i].second == s[from].second) continue;
      if (i == s.size()) break;  // after the last switch: not known
      const TimeNs start = s[from].first, end = s[i].first;
      if (end > start) {
        out.global_tid.push_back(tid);
        out.start_ns.push_back(start);
        out.end_ns.push_back(end);
        out.cpu_ns.push_back(s[from].second ? end - start : 0);
        out.busy.push_back(s[from].second ? 1 : 0);
      }
      from = i;
    }
  }
  return {};
}

}  // namespace kernscope::nsys
