// Counting CUDA calls as calls, not rows: nsys's --cudabacktrace stores each backtraced call twice
// (ApiLookup::is_repeat), so a count of rows overstates the calls. The lookup that tells repeats
// apart is built only when the trace has calls of the asked role, so traces without any pay nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/trace_context.hpp"
#include "model/api_roles.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::report {

using kernscope::TraceContext;

// `shared`: the run's context, whose lookup is used (built there when first needed) instead of a private one.
inline std::int64_t count_api_calls(const Trace& trace, ApiRole role, const TraceContext* shared = nullptr) {
  const auto& a = trace.api_calls;
  // Each name's role once: a role lookup per row cost 46 instructions a call, most of this count on
  // an eager trace with no call of the role.
  const NamesWithRole named(a, trace.strings, role);
  if (!named.any()) return 0;
  std::vector<RowIndex> rows;
  for (RowIndex i = 0; i < a.size(); ++i) {
    if (named(a.name[i])) rows.push_back(i);
  }
  std::optional<ApiLookup> own;
  const ApiLookup& lookup = shared ? shared->api_lookup() : own.emplace(a);
  std::int64_t calls = 0;
  for (RowIndex i : rows) calls += !lookup.is_repeat(i, trace.strings);
  return calls;
}

// Kernels that ran inside graph replays, seen by the launch that ran them: a graph node id (nsys
// and CUPTI itemize graphs node by node), else the correlation id of a graph launch (Kineto and
// roctracer keep no node ids: the kernels of a cudaGraphLaunch / hipGraphLaunch carry its id).
struct GraphReplayKernels {
  std::int64_t by_node_id = 0, by_launch_id = 0;
  std::int64_t total() const { return by_node_id + by_launch_id; }
};
inline GraphReplayKernels count_graph_replay_kernels(const Trace& trace, const ApiLookup& lookup) {
  GraphReplayKernels out;
  const auto& k = trace.kernels;
  // Each call name's role once; without a graph launch among them (eager traces) no kernel's launch
  // is looked up.
  const NamesWithRole graph_launch(trace.api_calls, trace.strings, ApiRole::kGraphLaunch);
  const bool node_ids = !k.graph_node_id.empty();
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (node_ids && k.graph_node_id[i] != 0) {
      ++out.by_node_id;
    } else if (graph_launch.any()) {
      if (const auto call = lookup.find(k.global_pid[i], k.correlation_id[i])) out.by_launch_id += graph_launch(trace.api_calls.name[*call]);
    }
  }
  return out;
}

}  // namespace kernscope::report
