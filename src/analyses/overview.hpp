// What a trace holds, for `kernscope info`: source, time span, devices, counts per event kind,
// processes and threads, top-level NVTX ranges, and what is missing.
#pragma once

#include "analyses/steps/tracer_cost.hpp"

#include <optional>
#include <string>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

struct KindCount {
  std::string kind;   // "kernels", "memcpy"...
  bool present;       // the source has this kind of event at all
  std::size_t count;  // rows loaded
};

struct TopLevelRange {
  std::string name;  // "domain:text"
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
};

struct TraceOverview {
  SourceInfo source;
  TimeNs first_ns = 0;  // the span of the recorded events (NVTX declarations left out, below)
  TimeNs last_ns = 0;
  // NVTX rows that declare rather than record (domain creations, category and thread names) are
  // dated when the program declared them: with a capture range (nsys --capture-range) that can be
  // long before the profiled window, so the span leaves them out; those that lie outside it are
  // counted here with their times.
  std::int64_t declarations_outside = 0;
  TimeNs declarations_first_ns = 0;
  TimeNs declarations_last_ns = 0;
  std::vector<Device> devices;
  std::vector<KindCount> counts;
  std::vector<Process> processes;  // every process and thread the trace names, in id order
  std::vector<Thread> threads;
  // Those with GPU or CUDA activity (kernels, copies, API calls, NVTX ranges): what `info` lists
  // unless asked for --all; a trace can name a thousand idle system threads.
  std::vector<Process> active_processes;
  std::vector<Thread> active_threads;
  std::vector<TopLevelRange> top_level_ranges;
  std::int64_t graph_node_kernels = 0;
  // Kernels carrying a graph launch's correlation id (Kineto, roctracer: no node ids), counted only
  // where no kernel has a node id: a graph's replays seen, not hidden.
  std::int64_t graph_replay_kernels = 0;
  std::int64_t graph_launches = 0;
  std::vector<Note> notes;  // what the trace lacks or the reader met: the trace's notes, then the overview's
  // Traces of kernscope's tracer: what tracing cost the program (src/analyses/steps/tracer_cost.hpp).
  std::optional<TracerCostEstimate> tracer_cost;
};

TraceOverview describe(const Trace& trace);

}  // namespace kernscope
