// The what-if changes, each a model of what the change does to the dependency graph (whatif.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "kernscope/op_classes.hpp"
#include "analyses/whatif/whatif_graph.hpp"
#include "base/sort_runs.hpp"

namespace kernscope::whatif {
namespace {

// The host's gaps shorter than this between a step's launches are the framework's per-operation
// cost, which a graph replay does not pay (the step accounting's launch run uses the same bound).
constexpr std::int64_t kLaunchGap = 100'000;
// Tags of the tracks that moved operations run on (above the stream key's device bits).
constexpr std::int64_t kCopyTrackTag = std::int64_t{1} << 61;
constexpr std::int64_t kCommTrackTag = std::int64_t{1} << 60;

std::size_t node_index(std::int32_t i) { return static_cast<std::size_t>(i); }

void graphs(Graph& g, const StepAnalysis& steps) {
  std::int64_t captured = 0, graphed_steps = 0;
  std::vector<std::int32_t> graph_call(g.nodes.size(), kNoNode);  // removed call -> the step's graph launch
  for (std::size_t s = 0; s < steps.steps.size(); ++s) {
    const std::int32_t a = g.step_start_mark[s], b = g.step_end_mark[s];
    if (a == kNoNode || b == kNoNode) continue;
    std::int32_t launch = kNoNode;
    auto gone = [&](std::int32_t i) {
      const Node& n = g.nodes[node_index(i)];
      return n.kind == NodeKind::kCall && (n.call == HostCallKind::kLaunch || n.call == HostCallKind::kRuntime);
    };
    for (std::int32_t i = a + 1; i < b; ++i) {
      if (!gone(i)) continue;
      Node& n = g.nodes[node_index(i)];
      if (launch == kNoNode && n.call == HostCallKind::kLaunch) {
        launch = i;
        n.duration = g.graph_launch_ns;
      } else {
        n.duration = 0;
        n.removed = true;
      }
      ++captured;
    }
    if (launch == kNoNode) continue;
    ++graphed_steps;
    for (std::int32_t i = a + 1; i < b; ++i) {
      if (gone(i)) graph_call[node_index(i)] = launch;
    }
    // The framework's time between the launches goes with them; longer host work stays.
    for (std::int32_t i = a + 1; i <= b; ++i) {
      Node& n = g.nodes[node_index(i)];
      if (n.host_order.node == kNoNode || n.host_order.lag >= kLaunchGap) continue;
      if (gone(i) || gone(n.host_order.node)) n.host_order.lag = std::min<std::int64_t>(n.host_order.lag, 0);
    }
  }
  // Operations follow the graph launch and run back to back. Each keeps its delay after a launch
  // (the latency, and where it waited longer for what the trace does not show, that wait: it is
  // the GPU's, not the launching host's).
  for (Node& n : g.nodes) {
    if (n.kind != NodeKind::kOp || n.launch.node == kNoNode || graph_call[node_index(n.launch.node)] == kNoNode) continue;
    n.launch = Term{graph_call[node_index(n.launch.node)], false, n.launch.lag};
    if (n.stream.node != kNoNode) n.stream.lag = g.graph_node_gap_ns;
  }
  if (graphed_steps == 0) {
    g.notes.push_back({"change_not_applicable", NoteSeverity::kInfo, "graphs: no step with a host range launches work here: nothing to capture"});
  } else {
    g.notes.push_back({"graph_node_gap", NoteSeverity::kInfo,
                       "graphs: kernels of a graph " + std::to_string(g.graph_node_gap_ns) + " ns apart, from " + g.graph_node_gap_source});
  }
  (void)captured;
}

void no_sync(Graph& g, const std::string& call, const Trace& trace) {
  std::int64_t removed = 0;
  for (Node& n : g.nodes) {
    if (n.kind != NodeKind::kCall || !n.sync || n.step < 0 || n.waits_begin == n.waits_end) continue;
    if (!call.empty() && api_base_name(trace.strings.get(n.name)) != call) continue;
    n.waits_end = n.waits_begin;
    ++removed;
  }
  if (removed == 0) {
    g.notes.push_back({"change_not_applicable", NoteSeverity::kInfo,
                       "no-sync: no blocking synchronization" + (call.empty() ? std::string() : " named " + call) + " waits inside a step"});
  }
}

// A kernel's class for a change: attention kernels whose names do not say the phase take their
// step's, as `ops` and `account` name them (attention_prefill, attention_decode).
bool class_matches(const std::string& node_class, const std::string& wanted, const Node& n, const StepAnalysis& steps) {
  if (node_class == wanted) return true;
  if (node_class != "attention" || n.step < 0 || static_cast<std::size_t>(n.step) >= steps.steps.size()) return false;
  const Phase phase = steps.steps[static_cast<std::size_t>(n.step)].phase;
  return (wanted == "attention_prefill" && phase == Phase::kPrefill) || (wanted == "attention_decode" && phase == Phase::kDecode);
}

void scale(Graph& g, const WhatIfChange& c, const TraceContext& context, const StepAnalysis& steps) {
  std::int64_t scaled = 0;
  for (Node& n : g.nodes) {
    if (n.kind != NodeKind::kOp) continue;
    bool match = false;
    switch (n.op) {
      case OpKind::kCompute:
      case OpKind::kComm: match = class_matches(context.class_names()[n.class_id], c.op_class, n, steps); break;
      case OpKind::kCopy: match = c.op_class == "memcpy"; break;
      case OpKind::kMemset: match = c.op_class == "memset"; break;
      case OpKind::kGraph: match = c.op_class == kWholeGraphClass; break;
    }
    if (!match) continue;
    n.duration = std::llround(static_cast<double>(n.duration) * c.factor);
    ++scaled;
  }
  if (scaled == 0) {
    std::string known;
    for (const auto& name : context.class_names()) known += (known.empty() ? "" : ", ") + name;
    g.notes.push_back({"change_not_applicable", NoteSeverity::kInfo,
                       "scale: no operation of class " + c.op_class + " (the trace's classes: " + known + ", memcpy, memset)"});
  }
}

// Moves the operations `moves` picks to their own track per stream: each keeps its place after the
// operation before it on its old stream (extra term); a host-to-device copy is still waited for by
// the next operation of its old stream; the old stream's operations follow each other without it.
template <class Moves>
std::int64_t move_to_own_stream(Graph& g, std::int64_t tag, Moves&& moves) {
  std::vector<std::int32_t> ops;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kOp) ops.push_back(static_cast<std::int32_t>(i));
  }
  sort_by_runs(ops, [&](std::int32_t x, std::int32_t y) {
    const Node& a = g.nodes[node_index(x)];
    const Node& b = g.nodes[node_index(y)];
    return a.track != b.track ? a.track < b.track : a.start != b.start ? a.start < b.start : x < y;
  });
  std::int64_t moved = 0;
  std::int64_t track = INT64_MIN;
  std::int32_t last_kept = kNoNode, waiting_copy = kNoNode;
  std::map<std::int64_t, std::int32_t> last_on;  // new track -> its last operation
  std::unordered_map<std::int32_t, std::vector<std::int32_t>> moved_after;  // kept op -> moved ops after it, for syncs
  for (const std::int32_t o : ops) {
    Node& n = g.nodes[node_index(o)];
    if (n.track != track) {
      track = n.track;
      last_kept = kNoNode;
      waiting_copy = kNoNode;
    }
    if (moves(n)) {
      const std::int64_t new_track = n.track | tag | (static_cast<std::int64_t>(n.copy_kind) << 56);
      auto [it, first] = last_on.try_emplace(new_track, kNoNode);
      n.stream = it->second != kNoNode ? Term{it->second, true, g.queue_gap_ns} : Term{};
      if (n.op != OpKind::kCopy || n.copy_kind != 1) {
        // It reads what the operation before it wrote.
        if (last_kept != kNoNode) n.extra = Term{last_kept, true, g.queue_gap_ns};
      } else {
        waiting_copy = o;  // the next operation of the old stream reads what it copied
      }
      if (!n.stream.set() && !n.launch.set() && !n.extra.set()) n.stream = Term::fixed_at(n.start);
      n.track = new_track;
      it->second = o;
      moved_after[last_kept].push_back(o);
      ++moved;
      continue;
    }
    if (n.stream.node != kNoNode && n.stream.node != last_kept) {
      n.stream = last_kept != kNoNode ? Term{last_kept, true, g.queue_gap_ns} : Term{};
      if (!n.stream.set() && !n.launch.set() && !n.cross.set()) n.stream = Term::fixed_at(n.start);
    }
    if (waiting_copy != kNoNode) {
      n.extra = Term{waiting_copy, true, g.queue_gap_ns};
      waiting_copy = kNoNode;
    }
    last_kept = o;
  }
  // A synchronization that waited for an operation of the old stream also waits for the moved ones
  // launched before it.
  if (moved > 0) {
    std::vector<Term> waits;
    for (Node& n : g.nodes) {
      if (n.kind != NodeKind::kCall || n.waits_begin == n.waits_end) continue;
      const auto begin = static_cast<std::uint32_t>(waits.size());
      for (std::uint32_t w = n.waits_begin; w < n.waits_end; ++w) {
        const Term t = g.waits[w];
        waits.push_back(t);
        const TimeNs until = n.end;
        std::int32_t latest = kNoNode;
        if (auto it = moved_after.find(t.node); it != moved_after.end()) {
          for (const std::int32_t m : it->second) {
            if (g.nodes[node_index(m)].start <= until) latest = m;
          }
        }
        if (latest != kNoNode && latest != t.node) waits.push_back(Term{latest, true, t.lag});
      }
      n.waits_begin = begin;
      n.waits_end = static_cast<std::uint32_t>(waits.size());
    }
    g.waits = std::move(waits);
  }
  return moved;
}

void overlap_copies(Graph& g) {
  const auto copy = [](const Node& n) { return n.op == OpKind::kCopy && (n.copy_kind == 1 || n.copy_kind == 2); };
  bool unmeasured = false;
  for (Node& n : g.nodes) {
    if (n.kind == NodeKind::kOp && copy(n) && n.pageable) {
      const double speed = n.copy_kind == 1 ? g.pinned_h2d_bytes_per_ns : g.pinned_d2h_bytes_per_ns;
      if (speed > 0 && n.bytes > 0) n.duration = std::min<std::int64_t>(n.duration, std::llround(static_cast<double>(n.bytes) / speed));
      else unmeasured = true;
    }
    // Synchronous copies no longer hold the host.
    if (n.kind == NodeKind::kCall && n.call == HostCallKind::kBlocking && !n.sync) n.waits_end = n.waits_begin;
  }
  const std::int64_t moved = move_to_own_stream(g, kCopyTrackTag, copy);
  if (moved == 0) g.notes.push_back({"change_not_applicable", NoteSeverity::kInfo, "overlap-copies: no host-to-device or device-to-host copy to move"});
  if (unmeasured) {
    g.notes.push_back({"pinned_speed_unmeasured", NoteSeverity::kInfo,
                       "overlap-copies: pageable copies keep their traced speed where the trace has no pinned copy of their direction "
                       "(1 MiB or more) to measure the pinned speed from"});
  }
}

void overlap_comm(Graph& g) {
  const std::int64_t moved = move_to_own_stream(g, kCommTrackTag, [](const Node& n) { return n.op == OpKind::kComm; });
  if (moved == 0) {
    g.notes.push_back({"change_not_applicable", NoteSeverity::kInfo, "overlap-comm: no collective or peer-to-peer kernel to move"});
  } else {
    g.notes.push_back({"collective_readers_unknown", NoteSeverity::kInfo,
                       "overlap-comm: an upper bound: the trace does not say which kernel reads a collective's result, so only "
                       "synchronizations wait for the moved collectives (tensor-parallel layers that need the result next save less)"});
  }
}

void host(Graph& g, double factor) {
  for (Node& n : g.nodes) {
    if (n.kind != NodeKind::kOp && n.host_order.node != kNoNode && n.host_order.lag > 0) {
      n.host_order.lag = std::llround(static_cast<double>(n.host_order.lag) * factor);
    }
  }
}

}  // namespace

void apply_change(const TraceContext& context, const StepAnalysis& steps, const WhatIfChange& change, Graph& graph) {
  switch (change.kind) {
    case WhatIfChange::Kind::kGraphs: graphs(graph, steps); break;
    case WhatIfChange::Kind::kNoSync: no_sync(graph, change.call, context.trace()); break;
    case WhatIfChange::Kind::kScale: scale(graph, change, context, steps); break;
    case WhatIfChange::Kind::kOverlapCopies: overlap_copies(graph); break;
    case WhatIfChange::Kind::kOverlapComm: overlap_comm(graph); break;
    case WhatIfChange::Kind::kHost: host(graph, change.factor); break;
  }
}

void apply_edits(const std::vector<WhatIfEdit>& edits, Graph& g) {
  if (edits.empty()) return;
  // Each thread's calls in traced order, and the first operation each call launched.
  std::map<std::int64_t, std::vector<std::int32_t>> calls;
  std::vector<std::int32_t> first_op(g.nodes.size(), kNoNode);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::kCall) calls[n.track].push_back(static_cast<std::int32_t>(i));
    if (n.kind == NodeKind::kOp && n.launch.node != kNoNode) {
      std::int32_t& f = first_op[static_cast<std::size_t>(n.launch.node)];
      if (f == kNoNode || g.nodes[static_cast<std::size_t>(f)].start > n.start) f = static_cast<std::int32_t>(i);
    }
  }
  for (auto& [thread, list] : calls) {
    std::stable_sort(list.begin(), list.end(), [&](std::int32_t a, std::int32_t b) {
      return g.nodes[static_cast<std::size_t>(a)].start < g.nodes[static_cast<std::size_t>(b)].start;
    });
  }
  std::int64_t missed = 0, mine = 0;
  for (const WhatIfEdit& e : edits) {
    // Edits of another process's threads, or outside the replayed window, are not this graph's.
    auto it = calls.find(e.thread);
    if (it == calls.end() || e.at < g.window_start || e.at >= g.window_end) continue;
    ++mine;
    const auto& list = it->second;
    auto at = std::lower_bound(list.begin(), list.end(), e.at,
                               [&](std::int32_t node, TimeNs t) { return g.nodes[static_cast<std::size_t>(node)].start < t; });
    if (at == list.end()) {
      ++missed;
      continue;
    }
    Node& call = g.nodes[static_cast<std::size_t>(*at)];
    // The host's own work sits on the gap before the call (its host-order lag); the first call of
    // the window has no gap to grow, so its edit moves to the call's own time.
    if (call.host_order.node != kNoNode) call.host_order.lag = std::max<std::int64_t>(0, call.host_order.lag + e.host_ns);
    else call.duration = std::max<std::int64_t>(0, call.duration + e.host_ns);
    if (e.gpu_ns == 0) continue;
    auto launcher = at;
    while (launcher != list.end() && first_op[static_cast<std::size_t>(*launcher)] == kNoNode) ++launcher;
    if (launcher == list.end()) {
      ++missed;
      continue;
    }
    Node& op = g.nodes[static_cast<std::size_t>(first_op[static_cast<std::size_t>(*launcher)])];
    op.duration = std::max<std::int64_t>(0, op.duration + e.gpu_ns);
  }
  if (missed > 0) {
    g.notes.push_back({"edits_without_call", NoteSeverity::kInfo,
                       std::to_string(missed) + " of " + std::to_string(mine) +
                           " predicted edits in the replayed window found no call or launch of their thread after them",
                       static_cast<std::int64_t>(missed)});
  }
}

}  // namespace kernscope::whatif
