// What a trace holds, for `kernscope info`: source, time span, devices, counts per event kind,
// processes and threads, top-level NVTX ranges, and what is missing.
#pragma once

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
  TimeNs first_ns = 0;
  TimeNs last_ns = 0;
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
  std::int64_t graph_launches = 0;
  std::vector<std::string> missing;  // plain sentences
};

TraceOverview describe(const Trace& trace);

}  // namespace kernscope
