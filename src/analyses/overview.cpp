// kernscope info: a description of the trace and of what it lacks.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "analyses/nsys/api_counts.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "model/api_roles.hpp"
#include "analyses/overview.hpp"
#include "base/record_kinds.hpp"

namespace kernscope {
namespace {

// NVTX-text marks (nsys's NvtxtMark, 65), beside kNvtxMark: events, like the ranges.
constexpr std::int32_t kNvtxtMarkEvent = 65;

template <class Columns>
void widen_span(const Columns& c, TimeNs& first, TimeNs& last) {
  for (RowIndex i = 0; i < c.size(); ++i) {
    first = std::min(first, c.start_ns[i]);
    if (c.end_ns[i] != kNoTime) last = std::max(last, c.end_ns[i]);
    last = std::max(last, c.start_ns[i]);
  }
}

}  // namespace

TraceOverview describe(const Trace& trace) {
  TraceOverview o;
  o.source = trace.source;
  o.devices = trace.devices;
  o.processes = trace.processes;
  o.threads = trace.threads;
  std::sort(o.devices.begin(), o.devices.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  std::sort(o.processes.begin(), o.processes.end(), [](const Process& a, const Process& b) { return a.pid < b.pid; });
  std::sort(o.threads.begin(), o.threads.end(), [](const Thread& a, const Thread& b) { return a.global_tid < b.global_tid; });
  {
    std::set<std::int64_t> active_tids, active_pids;
    for (auto tid : trace.api_calls.global_tid) active_tids.insert(tid);
    for (auto tid : trace.nvtx.global_tid) active_tids.insert(tid);
    for (auto tid : active_tids) active_pids.insert(pid_of(tid));
    for (auto pid : trace.kernels.global_pid) active_pids.insert(pid_of(pid));
    for (auto pid : trace.memcpys.global_pid) active_pids.insert(pid_of(pid));
    for (const auto& p : o.processes) {
      if (active_pids.contains(p.pid)) o.active_processes.push_back(p);
    }
    for (const auto& t : o.threads) {
      if (active_tids.contains(t.global_tid)) o.active_threads.push_back(t);
    }
  }
  o.notes = trace.notes;
  // kernscope's tracer says what it recorded: a kind left out (sync, by default) is absent, not zero.
  if (const std::string recorded = trace.source.tracer_info_value("recorded_kinds"); !recorded.empty()) {
    const std::string_view kinds = std::string_view(recorded).substr(0, recorded.find(' '));
    std::string left_out;
    for (const auto kind : kRecordKinds) {
      bool listed = false;
      for (std::size_t b = 0; b <= kinds.size();) {
        const std::size_t e = std::min(kinds.find(',', b), kinds.size());
        listed = listed || kinds.substr(b, e - b) == kind;
        b = e + 1;
      }
      if (!listed) left_out += (left_out.empty() ? "" : ", ") + std::string(kind);
    }
    if (!left_out.empty()) {
      o.notes.push_back({"kinds_not_recorded", NoteSeverity::kInfo,
                         "not recorded by kernscope record: " + left_out +
                             " (its --record chose the kinds; sync calls are still in the CUDA API rows)"});
    }
  }

  auto count = [&](const char* name, EventKind kind, std::size_t n) {
    o.counts.push_back({name, trace.has(kind), n});
  };
  count("kernels", EventKind::kKernels, trace.kernels.size());
  count("memcpy", EventKind::kMemcpy, trace.memcpys.size());
  count("memset", EventKind::kMemset, trace.memsets.size());
  if (trace.has(EventKind::kGraphExecs)) count("graph_execs", EventKind::kGraphExecs, trace.graph_execs.size());
  count("cuda_api", EventKind::kApiCalls, trace.api_calls.size());
  count("sync", EventKind::kSyncs, trace.syncs.size());
  count("nvtx", EventKind::kNvtx, trace.nvtx.size());
  count("osrt", EventKind::kOsrt, trace.osrt.size());

  TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
  widen_span(trace.kernels, first, last);
  widen_span(trace.memcpys, first, last);
  widen_span(trace.memsets, first, last);
  widen_span(trace.graph_execs, first, last);
  widen_span(trace.api_calls, first, last);
  widen_span(trace.syncs, first, last);
  widen_span(trace.osrt, first, last);
  // NVTX: ranges and marks are events; the other rows are declarations (see overview.hpp).
  const auto& n = trace.nvtx;
  std::vector<RowIndex> declarations;
  for (RowIndex i = 0; i < n.size(); ++i) {
    const auto type = n.event_type[i];
    if (!is_nvtx_range(type) && type != kNvtxMark && type != kNvtxtMarkEvent) {
      declarations.push_back(i);
      continue;
    }
    first = std::min(first, n.start_ns[i]);
    if (n.end_ns[i] != kNoTime) last = std::max(last, n.end_ns[i]);
    last = std::max(last, n.start_ns[i]);
  }
  if (first > last && !declarations.empty()) {
    // Nothing but declarations: their times are the only ones the trace has.
    for (RowIndex i : declarations) {
      first = std::min(first, n.start_ns[i]);
      last = std::max(last, n.start_ns[i]);
    }
  }
  if (first <= last) {
    o.first_ns = first;
    o.last_ns = last;
    for (RowIndex i : declarations) {
      const TimeNs t = n.start_ns[i];
      if (t >= first && t <= last) continue;
      o.declarations_first_ns = o.declarations_outside == 0 ? t : std::min(o.declarations_first_ns, t);
      o.declarations_last_ns = o.declarations_outside == 0 ? t : std::max(o.declarations_last_ns, t);
      ++o.declarations_outside;
    }
  }

  // Top-level ranges: those no other range on the same thread encloses.
  const auto ranges = report::index_ranges(trace);
  std::vector<report::Interval> queries;
  for (const auto& r : ranges) queries.push_back({r.global_tid, r.start_ns, r.end_ns});
  std::vector<bool> nested(ranges.size(), false);
  report::find_enclosing(ranges, queries, [&](std::size_t q, std::size_t r) {
    if (q != r && !(ranges[r].start_ns == ranges[q].start_ns && ranges[r].end_ns == ranges[q].end_ns && r > q)) {
      nested[q] = true;
    }
  });
  std::map<std::string, TopLevelRange> top;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (nested[i]) continue;
    auto& t = top[ranges[i].name];
    t.name = ranges[i].name;
    ++t.count;
    t.total_ns += ranges[i].end_ns - ranges[i].start_ns;
  }
  for (auto& [name, t] : top) o.top_level_ranges.push_back(t);
  std::stable_sort(o.top_level_ranges.begin(), o.top_level_ranges.end(),
                   [](const TopLevelRange& a, const TopLevelRange& b) { return a.total_ns > b.total_ns; });

  const auto& graph_nodes = trace.kernels.graph_node_id;  // empty when opened without details
  for (RowIndex i = 0; i < graph_nodes.size(); ++i) o.graph_node_kernels += graph_nodes[i] != 0;
  o.graph_launches = report::count_api_calls(trace, ApiRole::kGraphLaunch);  // backtraced calls once
  if (o.graph_launches > 0 && o.graph_node_kernels == 0) {
    // Kineto and roctracer keep no node ids, but each replayed kernel carries its launch's id.
    o.graph_replay_kernels = report::count_graph_replay_kernels(trace, report::ApiLookup(trace.api_calls)).by_launch_id;
  }
  if (trace.graph_execs.size() > 0) {
    o.notes.push_back({"whole_graph_executions", NoteSeverity::kInfo,
                       std::to_string(trace.graph_execs.size()) +
                           " CUDA graph executions were traced as whole graphs: their GPU time counts as busy, but the "
                           "kernels inside them are not in kernel summaries (record with --cuda-graph-trace node to "
                           "itemize them)",
                       static_cast<std::int64_t>(trace.graph_execs.size())});
  } else if (o.graph_launches > 0 && o.graph_node_kernels == 0 && o.graph_replay_kernels == 0 && graph_nodes.size() > 0) {
    o.notes.push_back({"graph_kernels_hidden", NoteSeverity::kDataLoss,
                       std::to_string(o.graph_launches) +
                           " CUDA graph launches but no kernel carries a graph node id: graphs were traced as "
                           "whole graphs, so the kernels inside them are hidden (capture with "
                           "--cuda-graph-trace=node)",
                       static_cast<std::int64_t>(o.graph_launches)});
  }
  const auto& m = trace.memcpys;
  std::size_t unknown_kind = 0;
  for (RowIndex i = 0; i < m.size(); ++i) unknown_kind += m.src_kind[i] < 0 || m.dst_kind[i] < 0;
  if (unknown_kind > 0) {
    o.notes.push_back({"copies_without_memory_kind", NoteSeverity::kDataLoss,
                       std::to_string(unknown_kind) + " memory copies have no source/destination memory kind",
                       static_cast<std::int64_t>(unknown_kind)});
  }
  if (trace.has(EventKind::kNvtx) && trace.nvtx.size() == 0) {
    o.notes.push_back({"nvtx_empty", NoteSeverity::kInfo, "NVTX was traced but no range or mark was recorded"});
  }
  return o;
}

}  // namespace kernscope
