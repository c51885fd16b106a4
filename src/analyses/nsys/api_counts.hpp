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
  ApiRoleCache role_of(trace.strings);
  std::vector<RowIndex> rows;
  for (RowIndex i = 0; i < a.size(); ++i) {
    if (has_any(role_of(a.name[i]), role)) rows.push_back(i);
  }
  if (rows.empty()) return 0;
  std::optional<ApiLookup> own;
  const ApiLookup& lookup = shared ? shared->api_lookup() : own.emplace(a);
  std::int64_t calls = 0;
  for (RowIndex i : rows) calls += !lookup.is_repeat(i, trace.strings);
  return calls;
}

}  // namespace kernscope::report
