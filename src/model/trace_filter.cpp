#include "model/trace_filter.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <vector>

#include "model/columns.hpp"

namespace kernscope {
namespace {

struct NvtxTarget {
  std::string name;
  std::int64_t index = 0;
};

// "NAME[@DOMAIN][/INDEX]": like nsys, only a trailing "/<non-negative integer>" is an index; any
// other slash belongs to the name.
NvtxTarget parse_nvtx_target(const std::string& spec) {
  NvtxTarget target{spec, 0};
  const auto slash = spec.rfind('/');
  if (slash == std::string::npos) return target;
  const std::string digits = spec.substr(slash + 1);
  std::int64_t index = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (!digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size() && index >= 0) {
    target.name = spec.substr(0, slash);
    target.index = index;
  }
  return target;
}

bool overlaps(TimeNs s, TimeNs e, TimeNs start, TimeNs end) {
  if (s >= start && s < end) return true;
  if (e == kNoTime) return false;  // SQL NULL: the other two tests are unknown, hence false
  return (e >= start && e < end) || (s < start && e >= end);
}

template <class Columns, class ThreadTest>
void filter_columns(Columns& columns, const EventFilter& filter, ThreadTest&& same_thread) {
  std::vector<RowIndex> keep;
  keep.reserve(columns.size());
  for (RowIndex i = 0; i < columns.size(); ++i) {
    if (overlaps(columns.start_ns[i], columns.end_ns[i], filter.start, filter.end) && same_thread(i)) {
      keep.push_back(i);
    }
  }
  if (keep.size() != columns.size()) columns = select_rows(columns, keep);
}

}  // namespace

Result<EventFilter> resolve_filter(const Trace& trace, const FilterSpec& spec) {
  EventFilter filter;
  // nsys passes an open-ended --filter-time side as the extreme int64 value.
  filter.start = INT64_MIN;
  std::optional<TimeNs> nvtx_start, nvtx_end;
  if (spec.nvtx) {
    if (!trace.has(EventKind::kNvtx) || !(trace.loaded & bit(EventKind::kNvtx))) {
      return make_error(ErrorCode::kNoData,
                        trace.source.path + " does not contain NV Tools Extension (NVTX) data, so "
                                            "--filter-nvtx cannot be applied");
    }
    const NvtxTarget target = parse_nvtx_target(*spec.nvtx);
    const auto& n = trace.nvtx;
    // The range label here is TEXT[@DOMAIN]; domain names come from creation events of the same
    // process, unfiltered.
    std::vector<RowIndex> matches;
    std::unordered_map<std::int64_t, std::vector<RowIndex>> creations;  // domain id -> rows
    for (RowIndex i = 0; i < n.size(); ++i) {
      if (n.event_type[i] == kNvtxDomainCreate) creations[n.domain_id[i]].push_back(i);
    }
    for (RowIndex i = 0; i < n.size(); ++i) {
      if (!is_nvtx_range(n.event_type[i])) continue;
      std::string_view text = trace.strings.get(n.text[i]);
      bool matched = false;
      bool joined = false;
      if (auto it = creations.find(n.domain_id[i]); it != creations.end()) {
        for (RowIndex d : it->second) {
          if (process_key(n.global_tid[d]) != process_key(n.global_tid[i])) continue;
          joined = true;
          std::string label(text);
          label += '@';
          label += trace.strings.get(n.text[d]);
          if (label == target.name) matched = true;
        }
      }
      if (!joined && text == target.name) matched = true;
      if (matched) matches.push_back(i);
    }
    std::stable_sort(matches.begin(), matches.end(),
                     [&](RowIndex a, RowIndex b) { return n.start_ns[a] < n.start_ns[b]; });
    if (target.index >= static_cast<std::int64_t>(matches.size())) {
      return make_error(ErrorCode::kNotFound,
                        "NVTX range '" + *spec.nvtx + "' could not be found in " + trace.source.path);
    }
    const RowIndex found = matches[static_cast<std::size_t>(target.index)];
    nvtx_start = n.start_ns[found];
    nvtx_end = n.end_ns[found] == kNoTime ? kMaxTime : n.end_ns[found];
    filter.nvtx_global_tid = n.global_tid[found];
  }
  const auto& window = spec.time;
  if (window && window->start) filter.start = *window->start;
  else if (nvtx_start) filter.start = *nvtx_start;
  if (window && window->end) filter.end = *window->end;
  else if (nvtx_end) filter.end = *nvtx_end;
  if (filter.start > filter.end) {
    return make_error(ErrorCode::kInvalidArgument, "the start time cannot be greater than the end time");
  }
  return filter;
}

void apply_filter(Trace& trace, const EventFilter& filter) {
  const auto nvtx_tid = filter.nvtx_global_tid;
  const bool pushpop = nvtx_tid && pid_of(*nvtx_tid) != tid_of(*nvtx_tid);
  // Tables keyed by thread (globalTid) and by process (globalPid) are restricted differently.
  auto by_thread = [&](const auto& global_tid) {  // a std::vector or a DictColumn
    return [&, nvtx_tid, pushpop](RowIndex i) {
      if (!nvtx_tid) return true;
      if (pushpop) return global_tid[i] == *nvtx_tid;
      return process_key(global_tid[i]) == process_key(*nvtx_tid);
    };
  };
  auto by_process = [&](const DictColumn<std::int64_t>& global_pid) {
    return [&, nvtx_tid](RowIndex i) {
      return !nvtx_tid || process_key(global_pid[i]) == process_key(*nvtx_tid);
    };
  };
  filter_columns(trace.kernels, filter, by_process(trace.kernels.global_pid));
  filter_columns(trace.memcpys, filter, by_process(trace.memcpys.global_pid));
  filter_columns(trace.memsets, filter, by_process(trace.memsets.global_pid));
  filter_columns(trace.syncs, filter, by_process(trace.syncs.global_pid));
  filter_columns(trace.graph_execs, filter, by_process(trace.graph_execs.global_pid));
  filter_columns(trace.api_calls, filter, by_thread(trace.api_calls.global_tid));
  filter_columns(trace.nvtx, filter, by_thread(trace.nvtx.global_tid));
  filter_columns(trace.osrt, filter, by_thread(trace.osrt.global_tid));
  filter_columns(trace.overhead, filter, by_thread(trace.overhead.global_tid));
  // Nested filters keep the intersection.
  TimeNs lo = filter.start, hi = filter.end;
  if (trace.filter_window) {
    lo = std::max(lo, trace.filter_window->first);
    hi = std::min(hi, trace.filter_window->second);
  }
  trace.filter_window = std::make_pair(lo, hi);
}

}  // namespace kernscope
