// The dependency graph the what-if replay runs on (whatif.hpp has the model): one process's host
// calls, step marks and GPU operations inside a window, each with the edges that can hold its
// start (and, for a blocking call, its end), and the lags the trace shows on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/trace_context.hpp"
#include "model/api_roles.hpp"
#include "analyses/whatif/whatif.hpp"

namespace kernscope::whatif {

inline constexpr std::int32_t kNoNode = -1;

enum class NodeKind : std::uint8_t { kCall, kMark, kOp };
enum class OpKind : std::uint8_t { kCompute, kComm, kCopy, kMemset, kGraph };

// One term of a start: the node it waits for, whether for its start or its end, and the lag; or,
// without a node (what it waits for is outside the window, or not replayed), the time it gives,
// fixed. One 8-byte field holds the lag or the time: a Node holds five terms, and the replays hold
// up to three copies of a graph of ~135 k nodes (64 steps of the eager Llama), report's peak.
struct Term {
  std::int32_t node = kNoNode;
  bool from_end = true;
  // With a node: the lag (made with it: Term{node, from_end, lag}); without: the fixed time, INT64_MIN
  // when unset (the default, so a default term is unset).
  std::int64_t lag = INT64_MIN;
  // A term without a node that gives time `t`.
  static Term fixed_at(TimeNs t) { return Term{kNoNode, false, t}; }
  bool set() const { return node != kNoNode || lag != INT64_MIN; }
  bool fixed() const { return node == kNoNode && lag != INT64_MIN; }
};

// Which term held a node's start, for the critical path.
enum class Held : std::uint8_t { kNothing, kHostOrder, kLaunch, kStream, kCross, kExtra };

struct Node {
  NodeKind kind = NodeKind::kOp;
  HostCallKind call = HostCallKind::kNone;
  OpKind op = OpKind::kCompute;
  bool sync = false;      // a call with the sync role (not a synchronous copy)
  bool pageable = false;  // a copy from or to pageable memory
  bool removed = false;   // graphs: a launch that is now inside the graph (no time)
  bool graph_launch = false;  // a call that launches a whole graph
  std::int8_t copy_kind = 0;  // the copy's kind (1 H2D, 2 D2H, ...; CUPTI's 0-10, nsys's 11-13, -1 other); a byte: 8 bytes less a node
  std::int64_t bytes = 0;
  TimeNs start = 0, end = 0;   // traced
  std::int64_t duration = 0;   // own time: the op's, or the call's when it does not wait
  std::int64_t track = 0;      // a thread's global tid, or a stream key (see stream_key)
  StringId name = kNoString;   // the kernel's demangled name or the call's name
  std::uint32_t class_id = 0;  // compute and communication: the operation class
  std::int32_t step = -1;      // the step it belongs to (an index into StepAnalysis::steps)
  // Start terms: host order (calls and marks), or launch / stream / cross-stream / extra (ops).
  Term host_order, launch, stream, cross, extra;
  std::uint32_t waits_begin = 0, waits_end = 0;  // blocking calls: their wait terms in Graph::waits
};

// A GPU stream's key: the device above the stream; tracks of moved operations get a tag above it.
inline std::int64_t stream_key(std::uint32_t device, std::uint32_t stream) {
  return (std::int64_t{1} << 62) | (static_cast<std::int64_t>(device) << 32) | stream;
}

struct Graph {
  std::int64_t process = 0;  // process_key packing
  TimeNs window_start = 0, window_end = 0;  // what was replayed: [start, end)
  std::vector<Node> nodes;
  std::vector<Term> waits;
  std::vector<std::int32_t> step_start_mark, step_end_mark;  // per step of StepAnalysis (kNoNode: none here)
  std::int64_t launch_latency_ns = 0, queue_gap_ns = 0, graph_launch_ns = 0;
  std::int64_t graph_node_gap_ns = 0;  // between two kernels of one graph on one stream
  std::string graph_node_gap_source;   // "the trace's graphs", or the calibration row's
  double pinned_h2d_bytes_per_ns = 0, pinned_d2h_bytes_per_ns = 0;  // measured, 0: no pinned copy traced
  std::int64_t unexplained_ns = 0;  // starts held later than the nominal lags explain
  std::vector<Note> notes;
};

// The graph of process `process` over [lo, hi): its calls, the marks of `steps`' ranges that are
// inside, and its GPU operations.
Graph build_graph(const TraceContext& context, const StepAnalysis& steps, std::int64_t process, TimeNs lo, TimeNs hi,
                  const std::vector<bool>& replayed_step);

// Applies `change` to the graph (whatif.hpp says what each does); notes what it could not do.
void apply_change(const TraceContext& context, const StepAnalysis& steps, const WhatIfChange& change, Graph& graph);

// Applies an analysis's edits (whatif.hpp, WhatIfEdit); notes the edits it found no call for.
void apply_edits(const std::vector<WhatIfEdit>& edits, Graph& graph);

// The graphs of several processes (of one trace, or moved onto one clock) as one graph, in order;
// first_node gets each graph's first node in the joined one. The wait terms follow their nodes; the
// step marks are not joined (each trace numbers its own steps): they are read in each process's own
// graph, offset by its first node.
Graph join_graphs(const std::vector<const Graph*>& graphs, std::vector<std::int32_t>& first_node);

// What link_collectives did: collectives linked across processes, and those it left alone.
struct CollectiveLinks {
  std::int64_t linked = 0;           // collective calls whose kernels now wait for each other
  std::int64_t not_together = 0;     // calls where a rank's kernel ended before another rank's began
  std::int64_t unmatched_names = 0;  // kernels the processes ran a different number of times
};

// Each communication kernel of a joined graph waits for the same collective on the other processes:
// the k-th kernel of a name (`keys`: per node of `joined`, one number per kernel name, -1 for other
// nodes; the processes may come from traces with string tables of their own) on each process that runs it, where every such process ran it equally
// often and no rank's kernel ended before the last one began. A kernel's own time becomes its
// transfer (its traced end less the last arrival, scaled as a change scaled its time), and it ends
// no earlier than each peer's start plus that transfer: the replay without a change gives back the
// traced ends, and a rank that arrives earlier after a change still waits for the last.
CollectiveLinks link_collectives(Graph& joined, const std::vector<std::int32_t>& first_node, const std::vector<std::int64_t>& keys);

}  // namespace kernscope::whatif
