// kernscope steps: prefill/decode phases and every step decomposed.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/steps.hpp"

namespace kernscope::cli {
namespace {

struct StepsCliOptions {
  std::string trace;
  std::string step_range;
  std::string format = "table";
};

Table steps_table(const StepAnalysis& s) {
  Table t;
  t.report = "steps";
  t.title = "Steps";
  t.columns = {{"Step"}, {"Phase"}, {"Start", Unit::kTimestamp}, {"Wall", Unit::kDuration}, {"GPU Busy", Unit::kDuration},
               {"GPU Idle", Unit::kDuration}, {"Idle (%)"}, {"Kernels"}, {"Kernel Time", Unit::kDuration}, {"GPU Span", Unit::kDuration},
               {"Launches"}, {"Launch API", Unit::kDuration}, {"Syncs"}, {"Sync", Unit::kDuration}, {"Allocs"},
               {"H2D"}, {"D2H"}, {"Name"}};
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const auto& x = s.steps[i];
    const double idle = x.wall_ns ? std::round(1000.0 * static_cast<double>(x.gpu_idle_ns) / static_cast<double>(x.wall_ns)) / 10.0 : 0.0;
    t.rows.push_back({static_cast<std::int64_t>(i), std::string(phase_name(x.phase)), x.start_ns, x.wall_ns, x.gpu_busy_ns,
                      x.gpu_idle_ns, idle, x.kernels, x.kernel_ns, x.gpu_span_ns, x.launches, x.launch_api_ns, x.syncs, x.sync_ns,
                      x.allocations, x.h2d_copies, x.d2h_copies, x.name});
  }
  return t;
}

int run_steps(const StepsCliOptions& o) {
  auto format = parse_format(o.format);
  if (!format) return fail(format.error());
  OpenOptions open_options;
  open_options.detail_kinds = bit(EventKind::kMemcpy) | bit(EventKind::kMemset) | bit(EventKind::kNvtx);
  auto trace = open_trace(o.trace, open_options);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  StepOptions options;
  if (!o.step_range.empty()) options.step_range = o.step_range;
  auto steps = analyze_steps(loaded, OpRuleSet::builtin(), options);
  if (!steps) return fail(steps.error());
  render(std::cout, steps_table(*steps), RenderOptions{*format, TimeUnit::kNs});
  if (*format == Format::kTable) {
    auto dist = [](const char* what, const Distribution& d) {
      if (d.count == 0) return std::string();
      return fmt::format("  {:<26} n={:<5} p50 {:>10.3f} ms  p95 {:>10.3f} ms  p99 {:>10.3f} ms  max {:>10.3f} ms\n", what,
                         d.count, d.p50 / 1e6, d.p95 / 1e6, d.p99 / 1e6, static_cast<double>(d.max) / 1e6);
    };
    std::cout << "\nSteps from: " << steps->method << "\n";
    for (const auto& g : steps->groups) {
      std::cout << dist(fmt::format("{} [{}]", g.name, phase_name(g.phase)).c_str(), g.wall);
    }
    std::cout << "Headline (last group of each phase):\n"
              << dist("decode step (TPOT)", steps->decode_wall) << dist("prefill (TTFT)", steps->prefill_wall)
              << dist("kernel time / decode step", steps->decode_kernel_ns)
              << dist("GPU period / decode step", steps->decode_gpu_period);
    for (const auto& n : steps->notes) std::cout << "Note: " << n << '\n';
  }
  return 0;
}

}  // namespace

Command add_steps(CLI::App& app) {
  auto o = std::make_shared<StepsCliOptions>();
  auto* cmd = app.add_subcommand("steps", "Prefill/decode steps: wall, GPU busy/idle, launches, syncs; TTFT and TPOT distributions");
  cmd->add_option("--step-range", o->step_range, "NVTX range NAME[@DOMAIN] that marks one step");
  cmd->add_option("-f,--format", o->format, "table, csv, tsv or json")->capture_default_str();
  cmd->add_option("trace", o->trace, "trace file")->required();
  return [o] { return run_steps(*o); };
}

}  // namespace kernscope::cli
