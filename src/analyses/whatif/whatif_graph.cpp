// Builds the what-if dependency graph from what the trace records (whatif.hpp has the model).
#include "analyses/whatif/whatif_graph.hpp"
#include "base/sort_runs.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "kernscope/trace.hpp"

extern const char* const kernscope_builtin_whatif_calibration;

namespace kernscope::whatif {
namespace {

// An operation that waited for nothing else for more than this after its stream's previous one
// ended was not queued: its delay from its launch is a launch latency.
constexpr TimeNs kQueuedSlack = 2'000;
// An event wait across streams releases an operation within this of the other operation's end.
constexpr TimeNs kCrossStreamWindow = 20'000;
// How far the GPU's clock may run ahead of the host's in a trace: a call that waited for an operation
// may be shown returning up to this before the operation ends.
constexpr TimeNs kClockSkew = 20'000;
// Without a graph launch in the trace: what one costs on the host. cudaGraphLaunch of a decode
// step's graph takes a few microseconds on an H100/H200 (../shared/GPU.md: a 32-kernel graph's
// whole step, GPU work included, 34.2 us); 8 us is the figure used when the trace has none.
constexpr std::int64_t kDefaultGraphLaunchNs = 8'000;
// A launch reaches the GPU in microseconds (2-20 us on the fixtures' GPUs); an operation that started
// more than a millisecond after its launch on an idle stream waited for something else (an event
// of another stream, a GPU full with other streams' work): not a latency sample.
constexpr std::int64_t kLongestLatency = 1'000'000;
// Without a kernel launched onto an idle stream: a launch's latency to the GPU (about 5 us from a
// launch call's start to its kernel's start on the H200 traces of tests/fixtures).
constexpr std::int64_t kDefaultLaunchLatencyNs = 5'000;

// A column's value, 0 where the reader left the column out (a plan that reads fewer columns).
template <class Column>
auto value_or_zero(const Column& column, RowIndex r) {  // a std::vector or a DictColumn
  return r < column.size() ? column[r] : typename Column::value_type{};
}

std::int64_t median_or(std::vector<std::int64_t> v, std::int64_t fallback) {
  if (v.empty()) return fallback;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

std::int64_t percentile_or(std::vector<std::int64_t> v, double q, std::int64_t fallback) {
  if (v.empty()) return fallback;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

double median_or(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The first row of data/whatif_calibration.tsv for `quantity` whose GPU part is in `device` (or *).
double calibration_value(std::string_view quantity, const std::string& device) {
  std::string_view text = kernscope_builtin_whatif_calibration;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> cells;
    for (std::size_t at = 0;;) {
      const auto tab = line.find('\t', at);
      cells.push_back(line.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
      if (tab == std::string_view::npos) break;
      at = tab + 1;
    }
    if (cells.size() < 3 || cells[0] != quantity || (cells[1] != "*" && device.find(cells[1]) == std::string::npos)) continue;
    return std::strtod(std::string(cells[2]).c_str(), nullptr);
  }
  return 0;
}

class GraphBuilder {
 public:
  GraphBuilder(const TraceContext& context, const StepAnalysis& steps, std::int64_t process, TimeNs lo, TimeNs hi,
          const std::vector<bool>& replayed)
      : context_(context), trace_(context.trace()), steps_(steps), process_(process), lo_(lo), hi_(hi), replayed_(replayed) {
    graph_.process = process;
    graph_.window_start = lo;
    graph_.window_end = hi;
    graph_.step_start_mark.assign(steps.steps.size(), kNoNode);
    graph_.step_end_mark.assign(steps.steps.size(), kNoNode);
    for (std::size_t s = 0; s < steps.steps.size(); ++s) {
      const Step& st = steps.steps[s];
      if (st.global_tid == 0 && replayed[s]) gpu_time_steps_.push_back({st.start_ns, st.end_ns, process_key(st.global_pid), static_cast<std::int32_t>(s)});
    }
    std::sort(gpu_time_steps_.begin(), gpu_time_steps_.end(), [](const GpuTimeStep& a, const GpuTimeStep& b) { return a.start < b.start; });
  }

  Graph build() {
    add_host();
    add_ops();
    calls_in_gpu_time_steps();
    link_ops();
    link_waits();
    return std::move(graph_);
  }

 private:
  bool mine(std::int64_t global_id) const { return process_ == 0 || process_key(global_id) == process_; }
  bool inside(TimeNs t) const { return t >= lo_ && t < hi_; }
  // The rows of a table that can start inside the window, in row order: where the start column is
  // sorted (as exports write it) only those, else every row (the caller still checks inside()).
  // The replayed window is a few dozen steps of a trace that may hold millions of rows.
  struct RowSpan {
    RowIndex begin = 0, end = 0;
    RowIndex size() const { return end - begin; }
  };
  RowSpan rows_starting_inside(const std::vector<TimeNs>& start) const {
    const auto n = static_cast<RowIndex>(start.size());
    if (!std::is_sorted(start.begin(), start.end())) return {0, n};
    return {static_cast<RowIndex>(std::lower_bound(start.begin(), start.end(), lo_) - start.begin()),
            static_cast<RowIndex>(std::lower_bound(start.begin(), start.end(), hi_) - start.begin())};
  }

  // Each thread's outermost calls (a driver call inside a runtime call is part of it) and the step
  // marks, in time order, chained by host order.
  void add_host() {
    const auto& a = trace_.api_calls;
    struct Item {
      std::int64_t tid;
      TimeNs start, end;
      std::int32_t row;   // api row, or -1 - step for a start mark, -1 - steps - step for an end mark
    };
    std::vector<Item> items;
    const RowSpan rows = rows_starting_inside(a.start_ns);
    items.reserve(rows.size());
    for (RowIndex r = rows.begin; r < rows.end; ++r) {
      if (!inside(a.start_ns[r]) || !mine(a.global_tid[r])) continue;
      items.push_back({a.global_tid[r], a.start_ns[r], a.end_ns[r], static_cast<std::int32_t>(r)});
      const std::uint32_t correlation = value_or_zero(a.correlation_id, r);
      if (correlation != 0) calls_by_correlation_[process_key(a.global_tid[r])].push_back({correlation, a.start_ns[r]});
    }
    index_calls_by_correlation();
    const auto n_steps = static_cast<std::int32_t>(steps_.steps.size());
    for (std::int32_t s = 0; s < n_steps; ++s) {
      const Step& st = steps_.steps[static_cast<std::size_t>(s)];
      if (!replayed_[static_cast<std::size_t>(s)] || st.global_tid == 0 || !mine(st.global_tid)) continue;
      items.push_back({st.global_tid, st.start_ns, st.start_ns, -1 - s});
      items.push_back({st.global_tid, st.end_ns, st.end_ns, -1 - n_steps - s});
    }
    // By thread and start; at one instant a range's end, then a range's start, then calls (a range
    // ends after the calls inside it and starts before them), the enclosing call first, then the
    // earlier row. Calls come in start order and marks in step order: a few runs to merge.
    auto rank = [&](const Item& x) { return x.row >= 0 ? 2 : x.row >= -n_steps ? 1 : 0; };
    sort_by_runs(items, [&](const Item& x, const Item& y) {
      if (x.tid != y.tid) return x.tid < y.tid;
      if (x.start != y.start) return x.start < y.start;
      if (rank(x) != rank(y)) return rank(x) < rank(y);
      if (x.end != y.end) return x.end > y.end;
      return x.row < y.row;
    });
    graph_.nodes.reserve(items.size());
    std::int64_t tid = -1;
    std::int32_t previous = kNoNode;
    TimeNs outer_end = INT64_MIN;
    std::int32_t outer = kNoNode;
    for (const Item& it : items) {
      if (it.tid != tid) {
        tid = it.tid;
        previous = kNoNode;
        outer_end = INT64_MIN;
        outer = kNoNode;
      }
      if (it.row >= 0 && it.start < outer_end && it.end <= outer_end) {
        row_node_[static_cast<RowIndex>(it.row)] = outer;  // nested in the call before: part of it
        continue;
      }
      Node n;
      n.track = it.tid;
      n.start = it.start;
      n.end = it.end;
      if (it.row >= 0) {
        const StringId name = trace_.api_calls.name[static_cast<RowIndex>(it.row)];
        n.kind = NodeKind::kCall;
        n.name = name;
        n.call = call_kind(name);
        const ApiRole role = role_cache_(name);
        n.sync = has_any(role, ApiRole::kSync);
        n.graph_launch = has_any(role, ApiRole::kGraphLaunch);
      } else {
        n.kind = NodeKind::kMark;
      }
      n.duration = n.end - n.start;
      if (previous != kNoNode) n.host_order = Term{previous, true, n.start - graph_.nodes[static_cast<std::size_t>(previous)].end};
      else n.host_order = Term::fixed_at(n.start);  // the thread's first item in the window keeps its time
      const auto index = static_cast<std::int32_t>(graph_.nodes.size());
      if (it.row >= 0) {
        row_node_[static_cast<RowIndex>(it.row)] = index;
        if (it.end > outer_end) {
          outer_end = it.end;
          outer = index;
        }
      } else if (it.row >= -n_steps) {
        graph_.step_start_mark[static_cast<std::size_t>(-1 - it.row)] = index;
      } else {
        graph_.step_end_mark[static_cast<std::size_t>(-1 - n_steps - it.row)] = index;
      }
      graph_.nodes.push_back(n);
      previous = index;
    }
  }

  HostCallKind call_kind(StringId name) {
    auto it = call_kind_.find(name);
    if (it != call_kind_.end()) return it->second;
    return call_kind_[name] = host_call_kind(trace_.strings.get(name));
  }

  // The node of the call that launched an operation (its outermost call), kNoNode when that call is
  // outside the window or not traced; `start` is set to the call's start.
  std::int32_t launcher(std::int64_t global_pid, std::uint32_t correlation, TimeNs& start) const {
    if (correlation == 0) return kNoNode;
    const auto row = context_.api_lookup().find(global_pid, correlation);
    if (!row) return kNoNode;
    start = trace_.api_calls.start_ns[*row];
    auto it = row_node_.find(*row);
    return it == row_node_.end() ? kNoNode : it->second;
  }

  // Each process's calls in the window by correlation id, with the earliest start of a call at or
  // after each (CUPTI numbers a process's calls in the order they are made, so a call with a larger
  // id started no earlier than one with a smaller; the suffix minimum keeps that true where
  // threads' clocks blur it).
  void index_calls_by_correlation() {
    for (auto& [process, calls] : calls_by_correlation_) {
      std::sort(calls.begin(), calls.end());
      for (std::size_t i = calls.size(); i-- > 1;) calls[i - 1].second = std::min(calls[i - 1].second, calls[i].second);
    }
  }

  // An operation whose launching call the trace does not hold (a profiler window opened after it was
  // launched, or a call not traced): launched before the first call of its process in the window
  // with a larger correlation id; INT64_MIN where no such call is known.
  TimeNs launched_before(std::int64_t global_pid, std::uint32_t correlation) const {
    const auto it = calls_by_correlation_.find(process_key(global_pid));
    if (correlation == 0 || it == calls_by_correlation_.end()) return INT64_MIN;
    const auto& calls = it->second;
    const auto after = std::upper_bound(calls.begin(), calls.end(), std::make_pair(correlation, INT64_MAX));
    return after == calls.end() ? INT64_MIN : after->second;
  }

  void add_op(Node n, std::int64_t global_pid, std::uint32_t correlation, std::int32_t step) {
    n.kind = NodeKind::kOp;
    n.duration = n.end - n.start;
    n.step = step;
    TimeNs launch_start = INT64_MIN;
    const std::int32_t by = launcher(global_pid, correlation, launch_start);
    if (by != kNoNode) {
      n.launch = Term{by, false, 0};
    } else if (launch_start != INT64_MIN) {
      n.launch = Term::fixed_at(launch_start);
      outside_launch_[static_cast<std::int32_t>(graph_.nodes.size())] = launch_start;
    } else if (const TimeNs bound = launched_before(global_pid, correlation); bound != INT64_MIN && bound <= n.start) {
      untraced_launch_before_[static_cast<std::int32_t>(graph_.nodes.size())] = bound;
    }
    if (n.step < 0 && by != kNoNode) n.step = graph_.nodes[static_cast<std::size_t>(by)].step;
    graph_.nodes.push_back(n);
  }

  void add_ops() {
    // Calls take the step of the range they run in, on the step's thread (for ops launched by them).
    for (std::size_t s = 0; s < steps_.steps.size(); ++s) {
      const std::int32_t a = graph_.step_start_mark[s], b = graph_.step_end_mark[s];
      if (a == kNoNode || b == kNoNode) continue;
      for (std::int32_t i = a + 1; i < b; ++i) {
        Node& n = graph_.nodes[static_cast<std::size_t>(i)];
        if (n.kind == NodeKind::kCall && n.step < 0) n.step = static_cast<std::int32_t>(s);
      }
    }
    auto step_of = [](const std::vector<std::int32_t>& v, RowIndex r) { return r < v.size() ? v[r] : -1; };
    const auto& k = trace_.kernels;
    const auto& m = trace_.memcpys;
    const auto& ms = trace_.memsets;
    const auto& g = trace_.graph_execs;
    const RowSpan kernel_rows = rows_starting_inside(k.start_ns), copy_rows = rows_starting_inside(m.start_ns),
                  memset_rows = rows_starting_inside(ms.start_ns), graph_rows = rows_starting_inside(g.start_ns);
    graph_.nodes.reserve(graph_.nodes.size() + kernel_rows.size() + copy_rows.size() + memset_rows.size() + graph_rows.size());
    for (RowIndex r = kernel_rows.begin; r < kernel_rows.end; ++r) {
      if (!inside(k.start_ns[r]) || !mine(k.global_pid[r])) continue;
      Node n;
      n.start = k.start_ns[r];
      n.end = k.end_ns[r];
      n.track = stream_key(value_or_zero(k.device_id, r), value_or_zero(k.stream_id, r));
      n.name = k.demangled_name[r];
      n.class_id = context_.kernel_class_id(k.demangled_name[r]);
      n.op = context_.class_names()[n.class_id] == "communication" ? OpKind::kComm : OpKind::kCompute;
      add_op(n, k.global_pid[r], value_or_zero(k.correlation_id, r), step_of(steps_.kernel_step, r));
    }
    for (RowIndex r = copy_rows.begin; r < copy_rows.end; ++r) {
      if (!inside(m.start_ns[r]) || !mine(m.global_pid[r])) continue;
      Node n;
      n.start = m.start_ns[r];
      n.end = m.end_ns[r];
      n.track = stream_key(value_or_zero(m.device_id, r), value_or_zero(m.stream_id, r));
      n.op = OpKind::kCopy;
      const std::int32_t kind = value_or_zero(m.copy_kind, r);
      n.copy_kind = static_cast<std::int8_t>(kind >= 0 && kind <= 127 ? kind : -1);  // no kind is above 13
      n.bytes = value_or_zero(m.bytes, r);
      n.pageable = trace_.pageable_memcpy(r);
      add_op(n, m.global_pid[r], value_or_zero(m.correlation_id, r), step_of(steps_.memcpy_step, r));
      // A copy call that returned only once its copy had ended waited for it, whatever its name: an
      // "async" copy to or from pageable memory does (the driver stages it through a pinned buffer),
      // behind the work queued before it on its stream. Such a call blocks like a synchronous copy
      // (it waits for its own copy; overlap-copies and pinned buffers remove the wait).
      const Node& copy = graph_.nodes.back();
      if (copy.pageable && copy.launch.node != kNoNode) {
        Node& call = graph_.nodes[static_cast<std::size_t>(copy.launch.node)];
        if (call.kind == NodeKind::kCall && call.call == HostCallKind::kLaunch && !call.sync && call.end >= copy.end) {
          call.call = HostCallKind::kBlocking;
        }
      }
    }
    for (RowIndex r = memset_rows.begin; r < memset_rows.end; ++r) {
      if (!inside(ms.start_ns[r]) || !mine(ms.global_pid[r])) continue;
      Node n;
      n.start = ms.start_ns[r];
      n.end = ms.end_ns[r];
      n.track = stream_key(value_or_zero(ms.device_id, r), value_or_zero(ms.stream_id, r));
      n.op = OpKind::kMemset;
      add_op(n, ms.global_pid[r], value_or_zero(ms.correlation_id, r), step_of(steps_.memset_step, r));
    }
    for (RowIndex r = graph_rows.begin; r < graph_rows.end; ++r) {
      if (!inside(g.start_ns[r]) || !mine(g.global_pid[r])) continue;
      Node n;
      n.start = g.start_ns[r];
      n.end = g.end_ns[r];
      n.track = stream_key(value_or_zero(g.device_id, r), value_or_zero(g.stream_id, r));
      n.op = OpKind::kGraph;
      add_op(n, g.global_pid[r], value_or_zero(g.correlation_id, r), gpu_time_step_at(g.global_pid[r], n.start));
    }
  }

  // Steps found in GPU time have no range: a call takes the one its start, else its end, falls in (in
  // its process; a wait for a step's GPU work may begin before it), so that a change to calls
  // (no-sync) reaches them. After the operations took their steps: an operation the step analysis
  // left out of every step does not join its launching call's.
  void calls_in_gpu_time_steps() {
    for (Node& n : graph_.nodes) {
      if (n.kind != NodeKind::kCall || n.step >= 0) continue;
      n.step = gpu_time_step_at(n.track, n.start);
      if (n.step < 0 && n.end > n.start) n.step = gpu_time_step_at(n.track, n.end - 1);
    }
  }

  // The replayed step in GPU time (no host thread: steps split at GPU idle gaps, or a kernel period read on the GPU) of
  // process `global_pid` that holds instant `t`, -1 where none: a whole graph execution's step, as
  // the step analysis places kernels (a step with a host range takes it from its launching call).
  std::int32_t gpu_time_step_at(std::int64_t global_pid, TimeNs t) const {
    // Steps of one process do not overlap; those of several processes may: the latest start at or
    // before t, then back over the few earlier ones that could still hold it.
    auto it = std::upper_bound(gpu_time_steps_.begin(), gpu_time_steps_.end(), t, [](TimeNs v, const GpuTimeStep& s) { return v < s.start; });
    for (int looked = 0; it != gpu_time_steps_.begin() && looked < 64; ++looked) {
      --it;
      if (t < it->end && (it->process == 0 || it->process == process_key(global_pid))) return it->step;
    }
    return -1;
  }

  // The name of the GPU the process's first operation ran on (the first device's where unknown).
  std::string device_name(const std::vector<std::int32_t>& ops) const {
    if (!ops.empty()) {
      const auto id = (graph_.nodes[static_cast<std::size_t>(ops.front())].track >> 32) & 0x3FFFFFFF;
      for (const auto& d : trace_.devices) {
        if (d.id == id && !d.name.empty()) return d.name;
      }
    }
    for (const auto& d : trace_.devices) {
      if (!d.name.empty()) return d.name;
    }
    return {};
  }

  // When operation `o` was launched: its launching call's start, INT64_MIN where not traced.
  TimeNs launch_time(std::int32_t o) const {
    const Node& n = graph_.nodes[static_cast<std::size_t>(o)];
    if (n.launch.node != kNoNode) return graph_.nodes[static_cast<std::size_t>(n.launch.node)].start;
    auto it = outside_launch_.find(o);
    return it == outside_launch_.end() ? INT64_MIN : it->second;
  }

  // Stream order, the nominal lags, and which term holds each start (the others get the nominal
  // lag, or what the trace shows where that is less, so the traced start is given back).
  void link_ops() {
    std::vector<std::int32_t> ops;
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (graph_.nodes[i].kind == NodeKind::kOp) ops.push_back(static_cast<std::int32_t>(i));
    }
    sort_by_runs(ops, [&](std::int32_t x, std::int32_t y) {
      const Node& a = graph_.nodes[static_cast<std::size_t>(x)];
      const Node& b = graph_.nodes[static_cast<std::size_t>(y)];
      return a.track != b.track ? a.track < b.track : a.start != b.start ? a.start < b.start : x < y;
    });
    std::vector<std::int32_t> previous(graph_.nodes.size(), kNoNode);
    for (std::size_t i = 1; i < ops.size(); ++i) {
      const Node& a = graph_.nodes[static_cast<std::size_t>(ops[i - 1])];
      const Node& b = graph_.nodes[static_cast<std::size_t>(ops[i])];
      if (a.track == b.track) previous[static_cast<std::size_t>(ops[i])] = ops[i - 1];
    }
    // Nominal lags: launch to start where the stream was idle, previous end to start where queued.
    std::vector<std::int64_t> latencies, gaps;
    for (const std::int32_t o : ops) {
      const Node& n = graph_.nodes[static_cast<std::size_t>(o)];
      const TimeNs launched = launch_time(o);
      const std::int32_t p = previous[static_cast<std::size_t>(o)];
      const TimeNs before = p == kNoNode ? INT64_MIN : graph_.nodes[static_cast<std::size_t>(p)].end;
      // A graph's nodes start one after another long after its launch: not a launch's latency.
      const bool by_graph = n.launch.node != kNoNode && graph_.nodes[static_cast<std::size_t>(n.launch.node)].graph_launch;
      if (launched != INT64_MIN && !by_graph && n.start >= launched && n.start - launched <= kLongestLatency &&
          (before == INT64_MIN || n.start > before + kQueuedSlack)) {
        latencies.push_back(n.start - launched);
      }
    }
    // A launch's latency is a floor: an operation that waited longer waited for something the trace
    // does not show (the GPU full with another stream's work, a peer rank): the 10th percentile.
    graph_.launch_latency_ns = percentile_or(latencies, 0.10, kDefaultLaunchLatencyNs);
    for (const std::int32_t o : ops) {
      const Node& n = graph_.nodes[static_cast<std::size_t>(o)];
      const TimeNs launched = launch_time(o);
      const std::int32_t p = previous[static_cast<std::size_t>(o)];
      if (p == kNoNode) continue;
      const TimeNs before = graph_.nodes[static_cast<std::size_t>(p)].end;
      if ((launched == INT64_MIN || launched + graph_.launch_latency_ns <= before) && n.start >= before) gaps.push_back(n.start - before);
    }
    graph_.queue_gap_ns = median_or(gaps, 0);
    // Kernels of one graph launch, one after the other on a stream: a graph's own gap.
    std::vector<std::int64_t> node_gaps;
    for (const std::int32_t o : ops) {
      const Node& n = graph_.nodes[static_cast<std::size_t>(o)];
      const std::int32_t p = previous[static_cast<std::size_t>(o)];
      if (p == kNoNode || n.launch.node == kNoNode || !graph_.nodes[static_cast<std::size_t>(n.launch.node)].graph_launch) continue;
      const Node& before = graph_.nodes[static_cast<std::size_t>(p)];
      if (before.launch.node == n.launch.node && n.start >= before.end) node_gaps.push_back(n.start - before.end);
    }
    const std::string device = device_name(ops);
    if (node_gaps.size() >= 8) {
      graph_.graph_node_gap_ns = median_or(node_gaps, 0);
      graph_.graph_node_gap_source = "the trace's graph replays";
    } else {
      graph_.graph_node_gap_ns = std::llround(calibration_value("graph_node_gap_ns", device));
      graph_.graph_node_gap_source = "data/whatif_calibration.tsv (the trace replays no graph)";
    }
    // Ends of operations by time, for cross-stream waits.
    std::vector<std::pair<TimeNs, std::int32_t>> ends;
    for (const std::int32_t o : ops) ends.emplace_back(graph_.nodes[static_cast<std::size_t>(o)].end, o);
    sort_by_runs(ends, std::less<>());
    for (const std::int32_t o : ops) {
      Node& n = graph_.nodes[static_cast<std::size_t>(o)];
      const TimeNs launched = launch_time(o);
      const std::int32_t p = previous[static_cast<std::size_t>(o)];
      // Candidate times with the nominal lags, each no later than the traced start.
      TimeNs by_launch = INT64_MIN, by_stream = INT64_MIN;
      std::int64_t launch_lag = 0, stream_lag = 0;
      if (launched != INT64_MIN) {
        launch_lag = std::min(graph_.launch_latency_ns, n.start - launched);
        by_launch = launched + launch_lag;
      }
      TimeNs before = INT64_MIN;
      if (p != kNoNode) {
        before = graph_.nodes[static_cast<std::size_t>(p)].end;
        stream_lag = std::min(graph_.queue_gap_ns, n.start - before);
        by_stream = before + stream_lag;
      }
      const TimeNs nominal = std::max(by_launch, by_stream);
      // Neither explains the start: an operation of another stream that ended just before it.
      if (nominal != INT64_MIN && n.start - nominal > kQueuedSlack) {
        auto it = std::upper_bound(ends.begin(), ends.end(), std::make_pair(n.start, INT32_MAX));
        while (it != ends.begin()) {
          --it;
          if (it->first <= nominal || n.start - it->first > kCrossStreamWindow) break;
          const Node& other = graph_.nodes[static_cast<std::size_t>(it->second)];
          if (other.track != n.track) {
            n.cross = Term{it->second, true, n.start - it->first};
            break;
          }
        }
      }
      if (!n.cross.set() && nominal != INT64_MIN) {
        // The later term holds the start, with the lag the trace shows; beyond its nominal lag that
        // is unexplained (a launch queue, another process on the GPU, an untraced wait).
        if (by_launch >= by_stream) {
          graph_.unexplained_ns += n.start - by_launch;
          launch_lag += n.start - by_launch;
        } else {
          graph_.unexplained_ns += n.start - by_stream;
          stream_lag += n.start - by_stream;
        }
      }
      if (n.launch.node != kNoNode) n.launch.lag = launch_lag;
      else if (launched != INT64_MIN) n.launch = Term::fixed_at(launched + launch_lag);
      if (p != kNoNode) n.stream = Term{p, true, stream_lag};
      if (!n.launch.set() && !n.stream.set() && !n.cross.set()) n.stream = Term::fixed_at(n.start);  // nothing known: keeps its time
    }
    // Graph launches and pinned copy speeds, measured here.
    std::vector<std::int64_t> graph_launches;
    for (const Node& n : graph_.nodes) {
      if (n.kind == NodeKind::kCall && n.graph_launch) graph_launches.push_back(n.duration);
    }
    graph_.graph_launch_ns = median_or(graph_launches, kDefaultGraphLaunchNs);
    std::vector<double> h2d, d2h;
    for (const Node& n : graph_.nodes) {
      if (n.kind != NodeKind::kOp || n.op != OpKind::kCopy || n.pageable || n.bytes < (1 << 20) || n.end <= n.start) continue;
      if (n.copy_kind == 1) h2d.push_back(static_cast<double>(n.bytes) / static_cast<double>(n.end - n.start));
      if (n.copy_kind == 2) d2h.push_back(static_cast<double>(n.bytes) / static_cast<double>(n.end - n.start));
    }
    graph_.pinned_h2d_bytes_per_ns = median_or(h2d);
    graph_.pinned_d2h_bytes_per_ns = median_or(d2h);
    // GB/s is bytes per ns.
    if (graph_.pinned_h2d_bytes_per_ns == 0) graph_.pinned_h2d_bytes_per_ns = calibration_value("pinned_h2d_gbs", device);
    if (graph_.pinned_d2h_bytes_per_ns == 0) graph_.pinned_d2h_bytes_per_ns = calibration_value("pinned_d2h_gbs", device);
    ops_by_track_ = std::move(ops);
  }

  // What each blocking call waits for (whatif.hpp: wait), with the return latency the trace shows.
  void link_waits() {
    // Per stream, its operations in start order with their launch times (for "launched before").
    std::map<std::int64_t, std::vector<std::int32_t>> by_stream;
    for (const std::int32_t o : ops_by_track_) by_stream[graph_.nodes[static_cast<std::size_t>(o)].track].push_back(o);
    std::vector<std::pair<TimeNs, std::int32_t>> ends;
    for (const std::int32_t o : ops_by_track_) ends.emplace_back(graph_.nodes[static_cast<std::size_t>(o)].end, o);
    sort_by_runs(ends, std::less<>());
    std::unordered_multimap<std::int32_t, std::int32_t> launched;  // call -> the operations it launched
    for (const std::int32_t o : ops_by_track_) {
      const std::int32_t by = graph_.nodes[static_cast<std::size_t>(o)].launch.node;
      if (by != kNoNode) launched.emplace(by, o);
    }
    // Per stream, when each of its operations was launched (where the launch is not traced: just
    // before the first later-numbered call, else its start): a stream runs its work in launch order,
    // so these rise along it (kept monotone where the clocks of host and GPU blur them) and a binary
    // search finds the last launched before an instant. An operation queued before a profiler window
    // opened is so waited for by the window's first synchronization, which then ends when it does.
    std::map<std::int64_t, std::vector<TimeNs>> launched_at;
    for (const auto& [track, stream] : by_stream) {
      auto& times = launched_at[track];
      for (const std::int32_t o : stream) {
        const Node& op = graph_.nodes[static_cast<std::size_t>(o)];
        TimeNs launched = launch_time(o);
        if (launched == INT64_MIN) {
          const auto bound = untraced_launch_before_.find(o);
          launched = bound != untraced_launch_before_.end() ? bound->second - 1 : op.start;
        }
        times.push_back(std::max(times.empty() ? INT64_MIN : times.back(), launched));
      }
    }
    // The last operation of a stream launched before `t` and ended by `until` (give or take the
    // offset between the host's and the GPU's clocks: a synchronization returned 7.6 us before the
    // end of the kernel it waited for on the MI300 Qwen trace).
    auto last_before = [&](std::int64_t track, TimeNs t, TimeNs until) {
      const auto& stream = by_stream[track];
      const auto& times = launched_at[track];
      const auto at = std::lower_bound(times.begin(), times.end(), t) - times.begin();
      if (at == 0) return kNoNode;
      const std::int32_t o = stream[static_cast<std::size_t>(at - 1)];
      return graph_.nodes[static_cast<std::size_t>(o)].end <= until + kClockSkew ? o : kNoNode;
    };
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
      Node& n = graph_.nodes[i];
      if (n.kind != NodeKind::kCall || n.call != HostCallKind::kBlocking) continue;
      std::vector<std::int32_t> targets;
      // The operation that ended last inside the call; its own copy first.
      std::int32_t held = kNoNode;
      auto it = std::upper_bound(ends.begin(), ends.end(), std::make_pair(n.end, INT32_MAX));
      if (it != ends.begin()) {
        --it;
        if (it->first > n.start) held = it->second;
      }
      const std::string_view base = api_base_name(trace_.strings.get(n.name));
      const bool device_wide = base.find("DeviceSynchronize") != std::string_view::npos || base.find("CtxSynchronize") != std::string_view::npos ||
                               base.find("ThreadSynchronize") != std::string_view::npos;
      if (!n.sync) {
        // A synchronous copy waits for its own copy (launched by it).
        auto [first, last_op] = launched.equal_range(static_cast<std::int32_t>(i));
        for (auto l = first; l != last_op; ++l) targets.push_back(l->second);
      } else if (device_wide) {
        for (const auto& [track, stream] : by_stream) {
          const std::int32_t t = last_before(track, n.start, n.end);
          if (t != kNoNode) targets.push_back(t);
        }
      } else if (held != kNoNode) {
        const std::int32_t t = last_before(graph_.nodes[static_cast<std::size_t>(held)].track, n.start, n.end);
        targets.push_back(t != kNoNode ? t : held);
      }
      if (held != kNoNode && std::find(targets.begin(), targets.end(), held) == targets.end() && n.sync && !device_wide) targets.push_back(held);
      if (targets.empty()) continue;
      TimeNs last = INT64_MIN;
      for (const std::int32_t t : targets) last = std::max(last, graph_.nodes[static_cast<std::size_t>(t)].end);
      // The call returns this long after what it waited for ended; before it, where the trace shows
      // that: a copy from pageable memory to the device returns once its last data is staged, before
      // the DMA ends (CUDA's "API synchronization behavior": the mordred trace's 3.8 kB copies end
      // 2.6 us after their cudaMemcpy returned, the 64 MiB ones of tests/fixtures/whatif 10-14 us),
      // and a GPU clock running ahead of the host's shows the same.
      const std::int64_t ret = n.end - last;
      // Waited: what the call costs when it need not wait is no more than its return latency.
      if (last > n.start) n.duration = std::min(n.duration, std::max<std::int64_t>(ret, kQueuedSlack));
      n.waits_begin = static_cast<std::uint32_t>(graph_.waits.size());
      for (const std::int32_t t : targets) graph_.waits.push_back(Term{t, true, ret});
      n.waits_end = static_cast<std::uint32_t>(graph_.waits.size());
    }
  }

  const TraceContext& context_;
  const Trace& trace_;
  const StepAnalysis& steps_;
  std::int64_t process_;
  TimeNs lo_, hi_;
  const std::vector<bool>& replayed_;
  Graph graph_;
  std::unordered_map<RowIndex, std::int32_t> row_node_;
  // Operations launched by a call outside the window: the call's start (their launch term is fixed
  // at it plus the nominal latency, so the term no longer holds it).
  std::unordered_map<std::int32_t, TimeNs> outside_launch_;
  // Operations whose launch the trace does not hold: the start of a call known to come after it.
  std::unordered_map<std::int32_t, TimeNs> untraced_launch_before_;
  std::unordered_map<std::int64_t, std::vector<std::pair<std::uint32_t, TimeNs>>> calls_by_correlation_;  // process -> (id, start)
  ApiRoleCache role_cache_{trace_.strings};  // each call name's role, worked out once
  std::unordered_map<StringId, HostCallKind> call_kind_;
  std::vector<std::int32_t> ops_by_track_;
  struct GpuTimeStep {
    TimeNs start, end;
    std::int64_t process;  // process_key packing (0: steps of any process)
    std::int32_t step;
  };
  std::vector<GpuTimeStep> gpu_time_steps_;  // the replayed steps found in GPU time, by start
};

}  // namespace

Graph build_graph(const TraceContext& context, const StepAnalysis& steps, std::int64_t process, TimeNs lo, TimeNs hi,
                  const std::vector<bool>& replayed_step) {
  return GraphBuilder(context, steps, process, lo, hi, replayed_step).build();
}

}  // namespace kernscope::whatif
