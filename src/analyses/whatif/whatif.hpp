// What if: each step replayed from a dependency graph of what the trace records, with or without
// a change, and its time predicted (kernscope whatif, critical-path; report's predicted savings).
//
// The graph (one per process with steps; docs/whatif.md has the whole model):
//   host order    a thread's calls follow each other, each after the previous one ends plus the
//                 gap the trace shows between them (the host's own work: Python, the framework);
//                 a step's range start and end sit in that order as marks of no length
//   launch        a GPU operation starts no earlier than its launching call's start plus the
//                 process's launch latency (the 10th percentile of the delays of operations whose
//                 stream was idle: a floor, as longer delays waited for what the trace does not show)
//   stream        after the previous operation of its stream, plus the process's gap between
//                 queued operations
//   cross-stream  after an operation of another stream that ended just before it (within 20 us)
//                 where neither its launch nor its stream explains its start: an event wait
//   wait          a blocking call returns after what it waits for ends, plus the return latency the
//                 trace shows: the operation that ended last inside it (its own copy for a
//                 synchronous copy), and for a device or context synchronization the last
//                 operation launched before it on every stream, for a stream or event
//                 synchronization the last one on that operation's stream
// An operation that starts later than every edge explains keeps the difference as its own
// unexplained delay, so the replay without a change gives back the traced times.
//
// A step's time is the steady state of its loop: from the completion of the previous step of its
// process (its range's end or its GPU work's end, whichever is later) to its own completion, when
// both steps are of one group; for the first step of a group from its start, or from the previous
// step's completion where that is later. The span of a process's replayed steps (the first start to
// the last completion) is what every change that only removes time can only shorten.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/op_classes.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// One change to replay, each a named model of what the change does (docs/whatif.md):
//   graphs            each step's launches become one CUDA graph launch: the step's non-blocking
//                     CUDA calls and the host gaps under 100 us between them go; the first launch
//                     becomes a graph launch (its cost: the trace's graph launches, else 8 us);
//                     operations run back to back on their streams
//   no-sync[=CALL]    blocking synchronizations (all, or those of the API CALL) return at once
//   scale=CLASS:F     operations of an operation class (or "copy", "memset") take F of their time
//   overlap-copies    host<->device copies run on their own stream without blocking the host, at
//                     the trace's pinned speed where pageable; a host-to-device copy still ends
//                     before the next operation of its old stream, a device-to-host copy still
//                     starts after the previous one
//   overlap-comm      collectives run on their own stream: after the operation before them, but
//                     nothing after them waits except synchronizations
//   host=F            the host's own work between calls takes F of its time
struct WhatIfChange {
  enum class Kind : std::uint8_t { kGraphs, kNoSync, kScale, kOverlapCopies, kOverlapComm, kHost };
  Kind kind = Kind::kGraphs;
  std::string call;          // no-sync: the API (base name), empty: every synchronization
  std::string op_class;      // scale
  double factor = 1.0;       // scale, host
  std::string text;          // as given
};
Result<WhatIfChange> parse_whatif_change(const std::string& text);
// How the changes are spelled, for --help and errors ("graphs, no-sync[=CALL], scale=CLASS:FACTOR, ...");
// roof=CLASS among them (roof_change.hpp makes it a scale).
const std::string& whatif_change_spellings();
// Whether `op_class` names an operation class (operation_classes(): what `ops` prints, its
// attention_prefill/attention_decode included), as scale= and roof= take it; else an error for
// --change `text` listing them.
Result<void> check_change_class(const std::string& text, const std::string& op_class);

// Where a step's critical path runs, by category of the step accounting and by part
// (gpu.<class>, communication, copy.<dir>, host.launch|runtime|framework, blocked.<call>,
// idle.gap (between queued operations), idle.latency (launch to start), idle.unexplained).
struct PathAccount {
  std::int64_t ns = 0;
  std::array<std::int64_t, kTimeCategories> category{};
  std::map<std::string, std::int64_t> parts;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> operations;  // name -> (count, ns)
  void add(const PathAccount& other);
};

struct ReplayedStep {
  std::size_t step = 0;             // index into StepAnalysis::steps
  TimeNs traced_start = 0, traced_completion = 0;
  TimeNs start = 0, completion = 0;  // replayed
  std::int64_t traced_ns = 0, predicted_ns = 0;  // the step's time (see the top of this file)
  PathAccount path;                  // its critical path in the replay
};

struct WhatIfGroup {
  std::string group;
  Phase phase = Phase::kUnknown;
  std::int64_t steps = 0;
  std::int64_t traced_step_ns = 0, predicted_step_ns = 0;      // medians
  double traced_mean_ns = 0, predicted_mean_ns = 0;
  PathAccount path;                                            // summed over its steps
  TimeCategory accounting_bottleneck = TimeCategory::kIdle;    // of the step accounting
};

// One link of a step's critical path (for the Perfetto export): an operation or a host call and
// the time it held the path.
struct PathLink {
  std::string name, part;
  std::int64_t track = 0;  // a thread (global tid) or a stream (device << 32 | stream, top bit set)
  bool gpu = false;
  TimeNs start = 0, end = 0;  // replayed
};

// A change an analysis predicts from a model of its own rather than one named on the command line
// (the perfect-router estimate: the expert-loop iterations even routing would add or remove): the
// host's own work before the first call a thread makes at or after `at` grows by `host_ns`, and the
// first GPU operation launched from there on grows by `gpu_ns`. Either may be negative; no time
// falls below zero.
struct WhatIfEdit {
  std::int64_t thread = 0;  // global tid of the launching thread
  TimeNs at = 0;
  std::int64_t host_ns = 0, gpu_ns = 0;
};

// Dependency graphs built for a replay, kept for the next replay of the same steps with another
// change (report prices up to six changes on one group's steps: each built the same graph). Shared
// by the replays that are given it; safe to use from several threads.
class WhatIfGraphCache;
std::shared_ptr<WhatIfGraphCache> make_whatif_graph_cache();

struct WhatIfOptions {
  std::vector<WhatIfChange> changes;
  std::vector<WhatIfEdit> edits;  // applied after `changes`
  // Replay only these steps (indices into StepAnalysis::steps) and what runs between them; empty:
  // every step.
  std::vector<std::size_t> only_steps;
  bool keep_links = false;  // fill WhatIfResult::links (the critical path, link by link)
  // Walk each replayed step's critical path (ReplayedStep::path, the groups' path accounts); false:
  // step times only (report's predictions read nothing else, and the walks were most of reading them).
  bool paths = true;
  // Where a replay of the same steps and process already built the graph, start from a copy of it
  // (changes and edits are applied to the copy). Null: build it.
  std::shared_ptr<WhatIfGraphCache> graphs;
  std::size_t links_of_step = SIZE_MAX;  // which step's path to keep (SIZE_MAX: the steady group's middle step)
};

struct WhatIfResult {
  std::vector<WhatIfChange> changes;
  std::vector<ReplayedStep> steps;   // in StepAnalysis order (replayed ones only)
  std::vector<WhatIfGroup> groups;   // by group and phase, in order of first start
  // Calibrations read from the trace (per leading process), said with the result.
  std::int64_t launch_latency_ns = 0, queue_gap_ns = 0, graph_launch_ns = 0, graph_node_gap_ns = 0;
  std::int64_t operations = 0, host_calls = 0, unexplained_ns = 0;  // what was replayed
  // Collective calls linked across processes (or traces) replayed as one graph; 0: replayed apart.
  std::int64_t linked_collectives = 0;
  // The leading process's replayed steps, from the first start to the last completion.
  std::int64_t traced_span_ns = 0, predicted_span_ns = 0;
  std::vector<PathLink> links;
  std::vector<Note> notes;
};

// Replays the steps of `steps` (found in `trace`) with `options.changes` applied; trace_context.hpp
// has the overload that shares a run's context.
WhatIfResult what_if(const Trace& trace, const OpRuleSet& rules, const StepAnalysis& steps, const StepAccounting& accounting,
                     const WhatIfOptions& options);
class TraceContext;
WhatIfResult what_if(const TraceContext& context, const StepAnalysis& steps, const StepAccounting& accounting,
                     const WhatIfOptions& options);  // sharing the run's context
// Several traces, each on its own clock (the ranks of one run, a file each), replayed as one: trace
// i's times less its offset_ns are on one clock (the ranks' offsets, ranks_skew.hpp), and the
// collectives of its processes wait for the others' as in one trace (whatif_graph.hpp,
// link_collectives). One result per trace, in its order and in its own clock. Of the options only
// the changes are taken (step indices and edit times belong to one trace); every step is replayed.
struct WhatIfTrace {
  const TraceContext* context = nullptr;
  const StepAnalysis* steps = nullptr;
  const StepAccounting* accounting = nullptr;
  std::int64_t offset_ns = 0;
  std::vector<WhatIfChange> changes;  // this trace's changes (roof= factors are its own); empty: the options'
};
std::vector<WhatIfResult> what_if_together(const std::vector<WhatIfTrace>& traces, const WhatIfOptions& options);

}  // namespace kernscope
