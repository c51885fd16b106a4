// Time and NVTX filters with Nsight Systems' semantics (`nsys stats --filter-time/--filter-nvtx`):
// an event is kept when it overlaps the window [start, end): it starts inside, ends inside, or
// spans it. Events without an end (marks, unclosed ranges) are kept only when they start inside.
// An NVTX filter takes its window from the chosen range instance and, like nsys, also keeps only
// events of that range's thread (push/pop ranges) or process (start/end ranges).
#pragma once

#include <optional>
#include <string>

#include "kernscope/error.hpp"
#include "kernscope/time_units.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct FilterSpec {
  std::optional<TimeWindow> time;   // --filter-time
  std::optional<std::string> nvtx;  // --filter-nvtx NAME[@DOMAIN][/INDEX]
  bool empty() const { return !time && !nvtx; }
};

struct EventFilter {
  TimeNs start = INT64_MIN;
  TimeNs end = kMaxTime;
  std::optional<std::int64_t> nvtx_global_tid;  // set by an NVTX filter
};

// Resolves the spec against the trace (finding the NVTX range instance). Errors: kNotFound when
// the range does not exist, kNoData when the trace has no NVTX data, kInvalidArgument otherwise.
Result<EventFilter> resolve_filter(const Trace& trace, const FilterSpec& spec);

// Keeps, in every loaded event kind, the rows that pass the filter.
void apply_filter(Trace& trace, const EventFilter& filter);

}  // namespace kernscope
