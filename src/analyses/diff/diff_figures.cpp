#include "analyses/diff/diff_figures.hpp"

#include <algorithm>

#include "analyses/steps/setup_split.hpp"
#include "analyses/trace_context.hpp"
#include "model/nvtx_names.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "base/text_pattern.hpp"
#include "kernscope/steps.hpp"

namespace kernscope {
namespace {

// The steps whose figures stand for the run: the last decode group (what TPOT is read from), else
// the group with the most steps (warm-up groups are smaller), in start order.
std::vector<std::size_t> measured_steps(const StepAnalysis& steps) {
  const StepGroup* chosen = nullptr;
  std::size_t chosen_size = 0;
  std::map<std::pair<std::string, Phase>, std::size_t> sizes;
  for (const auto& s : steps.steps) ++sizes[{s.group, s.phase}];
  for (const auto& g : steps.groups) {
    if (g.phase == Phase::kDecode) chosen = &g;
  }
  if (!chosen) {
    for (const auto& g : steps.groups) {
      const std::size_t n = sizes[{g.name, g.phase}];
      if (n > chosen_size) {
        chosen = &g;
        chosen_size = n;
      }
    }
  }
  std::vector<std::size_t> out;
  if (!chosen) return out;
  for (std::size_t i = 0; i < steps.steps.size(); ++i) {
    if (steps.steps[i].group == chosen->name && steps.steps[i].phase == chosen->phase) out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](std::size_t x, std::size_t y) { return steps.steps[x].start_ns < steps.steps[y].start_ns; });
  return out;
}

// The samples behind StepAnalysis's TPOT and TTFT distributions (steps.cpp reads them once).
void time_samples(const StepAnalysis& steps, RunFigures& run) {
  run.tpot.insert(run.tpot.end(), steps.tpot_samples.begin(), steps.tpot_samples.end());
  run.ttft.insert(run.ttft.end(), steps.ttft_samples.begin(), steps.ttft_samples.end());
}

// PyTorch's emit_nvtx names every operator call uniquely ("aten::to, seq = 12, op_id = 998949,
// sizes = [...]"): without its counters the calls of one operator are one row.
std::string range_identity(std::string label) {
  static const auto counters = TextPattern::literal(R"(, (?:seq|op_id) = \d+)");
  if (label.find(" = ") == std::string::npos) return label;
  return counters.replace_all(label, "");
}

}  // namespace

EventKinds figures_event_kinds() {
  return bit(EventKind::kKernels) | bit(EventKind::kMemcpy) | bit(EventKind::kMemset) | bit(EventKind::kApiCalls) |
         bit(EventKind::kSyncs) | bit(EventKind::kNvtx) | bit(EventKind::kGraphExecs);
}

Result<RunFigures> measure_run(const Trace& trace, IdentityMode mode, const OpRuleSet& rules) {
  RunFigures run;
  run.path = trace.source.path;
  run.source_format = trace.source.format;
  for (const auto& d : trace.devices) run.gpus.push_back(d.name);

  // GPU work launched before the first step (model load, warm-up) is left out of the classes, as
  // `ops` and `report` leave it out (setup_split.hpp); the kernel table keeps every kernel.
  const TraceContext context(trace, rules);
  const auto setup = report::split_setup(context);
  run.setup_note = setup.note;
  // Kernels by identity; their class from the same rules `ops` uses.
  KernelIdentity identity(trace, mode);
  const auto& k = trace.kernels;
  std::unordered_map<StringId, std::string> class_of_name;
  std::vector<const std::string*> key_of_row(k.size());
  for (RowIndex i = 0; i < k.size(); ++i) {
    const std::string& key = identity.key(i);
    key_of_row[i] = &key;
    auto& d = run.kernels[key];
    if (d.display.empty()) {
      d.display = std::string(identity.display(i));
      auto it = class_of_name.find(k.demangled_name[i]);
      if (it == class_of_name.end()) it = class_of_name.emplace(k.demangled_name[i], rules.classify(d.display).first).first;
      d.op_class = it->second;
    }
    d.add(k.end_ns[i] - k.start_ns[i]);
    run.total_kernel_ns += k.end_ns[i] - k.start_ns[i];
    if (setup.kernel[i]) continue;
    auto& c = run.classes[d.op_class];
    c.display = d.op_class;
    c.add(k.end_ns[i] - k.start_ns[i]);
  }
  for (RowIndex i = 0; i < trace.memcpys.size(); ++i) {
    if (setup.memcpy[i]) continue;
    run.classes["memcpy"].display = "memcpy";
    run.classes["memcpy"].add(trace.memcpys.end_ns[i] - trace.memcpys.start_ns[i]);
  }
  for (RowIndex i = 0; i < trace.memsets.size(); ++i) {
    if (setup.memset[i]) continue;
    run.classes["memset"].display = "memset";
    run.classes["memset"].add(trace.memsets.end_ns[i] - trace.memsets.start_ns[i]);
  }

  // NVTX ranges (PyTorch traces: user annotations and aten operators) by "domain:text".
  const NvtxDomainNames domains(trace);
  const auto& n = trace.nvtx;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (!is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime) continue;
    const std::string label = range_identity(domains.range_label(trace, i));
    auto& d = run.nvtx[label];
    d.display = label;
    d.add(n.end_ns[i] - n.start_ns[i]);
  }

  // Steps: a trace without steps (no annotations, no period, no gaps) still has kernels to diff.
  if (trace.kernels.size() == 0 && trace.graph_execs.size() == 0) return run;
  auto steps = analyze_steps(trace, rules, StepOptions{});
  if (!steps) return run;
  run.llm_inference = steps->workload.kind == WorkloadKind::kLlmInference;
  run.step_method = steps->method;
  run.tpot_from = steps->tpot_from;
  time_samples(*steps, run);
  const auto chosen = measured_steps(*steps);
  const StepAccounting accounting = account_steps(trace, rules, *steps);
  std::unordered_map<std::int32_t, std::size_t> slot_of_step;
  for (const auto i : chosen) {
    const Step& s = steps->steps[i];
    const TimeAccount& account = accounting.steps[i];
    run.step_time.push_back(account.window_ns);
    for (std::size_t c = 0; c < kTimeCategories; ++c) run.step_category[c].push_back(account.ns[c]);
    slot_of_step[static_cast<std::int32_t>(i)] = run.step_busy.size();
    run.step_busy.push_back(s.gpu_busy_ns);
    run.step_idle.push_back(s.gpu_idle_ns);
    run.step_launch.push_back(s.launch_api_ns);
    run.step_sync.push_back(s.sync_ns);
    run.step_kernel.push_back(s.kernel_ns);
    run.step_class_ns.push_back(s.class_ns);
  }
  run.step_kernel_ns.resize(chosen.size());
  for (RowIndex i = 0; i < k.size() && i < steps->kernel_step.size(); ++i) {
    auto it = slot_of_step.find(steps->kernel_step[i]);
    if (it == slot_of_step.end()) continue;
    run.step_kernel_ns[it->second][*key_of_row[i]] += k.end_ns[i] - k.start_ns[i];
  }
  return run;
}

Result<std::vector<SideFigures>> measure_groups(const std::vector<TraceGroup>& groups, const OpRuleSet& rules,
                                                std::string& identity) {
  std::vector<const Trace*> all;
  for (const auto& g : groups) all.insert(all.end(), g.runs.begin(), g.runs.end());
  const IdentityMode mode = identity_mode(all);
  identity = std::string(identity_mode_name(mode));
  std::vector<SideFigures> sides;
  for (const auto& g : groups) {
    SideFigures side{g.label, {}};
    for (const auto* trace : g.runs) {
      auto run = measure_run(*trace, mode, rules);
      if (!run) return std::unexpected(run.error());
      side.runs.push_back(std::move(*run));
    }
    sides.push_back(std::move(side));
  }
  return sides;
}

}  // namespace kernscope
