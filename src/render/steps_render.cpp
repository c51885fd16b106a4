#include "render/steps_render.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kernscope {

Table steps_table(const StepAnalysis& s) {
  Table t;
  t.report = "steps";
  t.title = "Steps";
  t.columns = {{"Step"}, {"Phase"}, {"Tokens"}, {"Start", Unit::kTimestamp}, {"Wall", Unit::kDuration}, {"GPU Busy", Unit::kDuration},
               {"GPU Idle", Unit::kDuration}, {"Idle (%)"}, {"Kernels"}, {"Kernel Time", Unit::kDuration}, {"GPU Span", Unit::kDuration},
               {"Launches"}, {"Launch API", Unit::kDuration}, {"Syncs"}, {"Sync", Unit::kDuration}, {"Allocs"},
               {"H2D"}, {"D2H"}, {"GCs"}, {"GC", Unit::kDuration}, {"Name"}, {"Group"}};
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const auto& x = s.steps[i];
    const double idle = x.wall_ns ? std::round(1000.0 * static_cast<double>(x.gpu_idle_ns) / static_cast<double>(x.wall_ns)) / 10.0 : 0.0;
    const Cell tokens = x.tokens >= 0 ? Cell{x.tokens} : Cell{};  // empty where the trace does not show them
    t.rows.push_back({static_cast<std::int64_t>(i), std::string(phase_name(x.phase)), tokens, x.start_ns, x.wall_ns, x.gpu_busy_ns,
                      x.gpu_idle_ns, idle, x.kernels, x.kernel_ns, x.gpu_span_ns, x.launches, x.launch_api_ns, x.syncs, x.sync_ns,
                      x.allocations, x.h2d_copies, x.d2h_copies, x.gc_count, x.gc_ns, x.name, x.group});
  }
  return t;
}

Table step_groups_table(const StepAnalysis& s) {
  Table t;
  t.report = "step_groups";
  t.title = "Step Groups";
  t.columns = {{"Name"}, {"Phase"}, {"Count"}, {"Wall Med", Unit::kDuration}, {"Wall P95", Unit::kDuration},
               {"Wall P99", Unit::kDuration}, {"Wall Max", Unit::kDuration}, {"Kernel Time Med", Unit::kDuration},
               {"GPU Span Med", Unit::kDuration}, {"GPU Period Med", Unit::kDuration}, {"Launches Med"}};
  for (const auto& g : s.groups) {
    t.rows.push_back({g.name, std::string(phase_name(g.phase)), g.wall.count, g.wall.p50, g.wall.p95, g.wall.p99, g.wall.max,
                      g.kernel_ns.p50, g.gpu_span.p50, g.gpu_period.p50, g.launches.p50});
  }
  return t;
}

std::string render_steps_summary(const StepAnalysis& steps) {
  auto dist = [](const std::string& what, const Distribution& d) {
    if (d.count == 0) return std::string();
    return fmt::format("  {:<26} n={:<5} p50 {:>10.3f} ms  p95 {:>10.3f} ms  p99 {:>10.3f} ms  max {:>10.3f} ms\n", what, d.count,
                       d.p50 / 1e6, d.p95 / 1e6, d.p99 / 1e6, static_cast<double>(d.max) / 1e6);
  };
  std::string out = "\nSteps from: " + steps.method + "\n";
  out += "Workload: " + std::string(workload_name(steps.workload.kind));
  for (std::size_t i = 0; i < steps.workload.evidence.size(); ++i) out += (i ? "; " : " (") + steps.workload.evidence[i];
  out += steps.workload.evidence.empty() ? "\n" : ")\n";
  for (const auto& g : steps.groups) out += dist(fmt::format("{} [{}]", g.name, phase_name(g.phase)), g.wall);
  out += "Headline (last group of each phase):\n" + dist("decode step wall", steps.decode_wall) +
         dist("prefill step wall", steps.prefill_wall) + dist("kernel time / decode step", steps.decode_kernel_ns) +
         dist("GPU period / decode step", steps.decode_gpu_period) +
         dist("TPOT (" + steps.tpot_from + ")", steps.tpot) + dist("TTFT (until its first token on the host, else its GPU work, ends)", steps.ttft);
  for (const auto& n : steps.notes) out += "Note: " + n.text + '\n';
  return out;
}

}  // namespace kernscope
