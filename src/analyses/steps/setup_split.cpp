#include "analyses/steps/setup_split.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "analyses/steps/step_windows.hpp"
#include "analyses/trace_context.hpp"

namespace kernscope::report {
namespace {

// Marks the rows of one GPU table that were launched before `cut`; returns (count, summed time).
template <class Columns>
std::pair<std::int64_t, std::int64_t> mark(const Columns& c, const TraceContext& context, TimeNs cut, bool host_cut,
                                           std::vector<bool>& out) {
  const Trace& trace = context.trace();
  out.assign(c.size(), false);
  std::int64_t n = 0, ns = 0;
  for (RowIndex i = 0; i < c.size(); ++i) {
    TimeNs when = c.start_ns[i];
    if (host_cut) {
      // The step windows are host ranges: compare the launching call's time when it was traced.
      if (const auto r = context.launch_of(c, i)) when = trace.api_calls.start_ns[*r];
    }
    if (when >= cut) continue;
    out[i] = true;
    ++n;
    ns += c.end_ns[i] - c.start_ns[i];
  }
  return {n, ns};
}

}  // namespace

SetupSplit split_setup(const TraceContext& context, const StepOptions& options) {
  const Trace& trace = context.trace();
  SetupSplit s;
  s.kernel.assign(trace.kernels.size(), false);
  s.memcpy.assign(trace.memcpys.size(), false);
  s.memset.assign(trace.memsets.size(), false);
  auto found = find_step_windows(context, options);
  if (!found || found->windows.empty()) return s;
  if (found->source != StepSource::kStepRange && found->source != StepSource::kAnnotations &&
      found->source != StepSource::kKernelPeriod && found->source != StepSource::kForwardPasses) {
    return s;
  }
  s.found = true;
  const auto& w = found->windows;
  s.first_step_start = std::min_element(w.begin(), w.end(), [](auto& a, auto& b) { return a.start < b.start; })->start;
  bool host = std::all_of(w.begin(), w.end(), [](auto& x) { return x.global_tid != 0; });
  if (found->partial_gpu_start != 0) {
    // Steps that began before the trace were left out: their work is not setup. The cut is where
    // the first of them began on the GPU, so GPU times are compared.
    s.first_step_start = found->partial_gpu_start;
    host = false;
  }
  std::tie(s.kernels, s.kernel_ns) = mark(trace.kernels, context, s.first_step_start, host, s.kernel);
  std::tie(s.copies, s.copy_ns) = mark(trace.memcpys, context, s.first_step_start, host, s.memcpy);
  std::tie(s.memsets, s.memset_ns) = mark(trace.memsets, context, s.first_step_start, host, s.memset);
  for (RowIndex i = 0; i < trace.memcpys.size(); ++i) {
    if (s.memcpy[i]) s.copy_bytes += trace.memcpys.bytes[i];
  }
  if (s.kernels + s.copies + s.memsets == 0) return s;
  s.note = fmt::format(
      "setup before the first step (launched before it started: model load, warm-up outside steps) left out of the "
      "classes: {} copies ({:.3f} GB, {:.3f} ms), {} kernels ({:.3f} ms), {} memsets ({:.3f} ms)",
      s.copies, static_cast<double>(s.copy_bytes) / 1e9, static_cast<double>(s.copy_ns) / 1e6, s.kernels,
      static_cast<double>(s.kernel_ns) / 1e6, s.memsets, static_cast<double>(s.memset_ns) / 1e6);
  return s;
}

}  // namespace kernscope::report
