#include "analyses/steps/thread_on_cpu.hpp"

#include <algorithm>

namespace kernscope::report {

ThreadOnCpu::ThreadOnCpu(const Trace& trace, std::int64_t global_tid) {
  const auto& c = trace.thread_cpu;
  std::vector<RowIndex> rows;
  for (RowIndex i = 0; i < c.size(); ++i) {
    if (c.global_tid[i] == global_tid && c.end_ns[i] > c.start_ns[i]) rows.push_back(i);
  }
  std::sort(rows.begin(), rows.end(), [&](RowIndex a, RowIndex b) { return c.start_ns[a] < c.start_ns[b]; });
  for (RowIndex i : rows) {
    start_.push_back(c.start_ns[i]);
    end_.push_back(c.end_ns[i]);
    cpu_ns_.push_back(std::clamp<std::int64_t>(c.cpu_ns[i], 0, c.end_ns[i] - c.start_ns[i]));
    busy_.push_back(c.busy[i]);
  }
}

bool ThreadOnCpu::mostly_busy(TimeNs a, TimeNs b) const {
  if (b <= a || start_.empty() || a < start_.front() || b > end_.back()) return false;
  // The first stretch ending after a; CPU time of a stretch cut by [a, b) counts pro rata.
  auto i = static_cast<std::size_t>(std::upper_bound(end_.begin(), end_.end(), a) - end_.begin());
  double cpu = 0;
  TimeNs covered_to = a;
  for (; i < start_.size() && start_[i] < b; ++i) {
    if (start_[i] > covered_to) return false;  // a hole: not known
    const TimeNs lo = std::max(a, start_[i]), hi = std::min(b, end_[i]);
    cpu += static_cast<double>(cpu_ns_[i]) * static_cast<double>(hi - lo) / static_cast<double>(end_[i] - start_[i]);
    covered_to = std::max(covered_to, end_[i]);
  }
  return covered_to >= b && 2 * cpu >= static_cast<double>(b - a);
}

std::optional<TimeNs> ThreadOnCpu::woke_before(TimeNs t, std::int64_t gap, TimeNs not_before) const {
  // The stretch holding the instant just before t.
  auto i = static_cast<std::ptrdiff_t>(std::lower_bound(end_.begin(), end_.end(), t) - end_.begin());
  if (i >= static_cast<std::ptrdiff_t>(start_.size()) || start_[i] >= t) return std::nullopt;
  for (; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    if (!busy_[u] && end_[u] - start_[u] >= gap) return end_[u] >= not_before ? std::optional<TimeNs>(end_[u]) : std::nullopt;
    if (start_[u] < not_before) return std::nullopt;
    if (i > 0 && end_[u - 1] < start_[u]) return std::nullopt;  // a hole before it: not known
  }
  return std::nullopt;  // busy since the stretches began: where the work began is not known
}

const char* thread_cpu_source(const Trace& trace) {
  return trace.source.format == "kernscope-tracer" ? "its CPU clock, read by kernscope record" : "its scheduling events, recorded by nsys";
}

}  // namespace kernscope::report
