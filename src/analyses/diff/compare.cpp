#include "analyses/diff/compare.hpp"

#include <cmath>
#include <set>

#include "analyses/diff/diff.hpp"

namespace kernscope {
namespace {

// A side's figure over its runs: step figures from the pooled steps, totals as per-run means.
std::optional<double> step_figure(const SideFigures& side, const std::string& metric) {
  RunFigures pooled;
  for (const auto& r : side.runs) {
    for (auto [to, from] : {std::pair{&pooled.tpot, &r.tpot}, {&pooled.ttft, &r.ttft}, {&pooled.step_busy, &r.step_busy},
                            {&pooled.step_idle, &r.step_idle}, {&pooled.step_launch, &r.step_launch},
                            {&pooled.step_sync, &r.step_sync}, {&pooled.step_kernel, &r.step_kernel}}) {
      to->insert(to->end(), from->begin(), from->end());
    }
  }
  auto value = run_step_figure(pooled, metric);
  if (value && metric == "steps") *value /= static_cast<double>(side.runs.size());
  return value;
}

}  // namespace

Comparison compare_sides(const std::vector<SideFigures>& sides) {
  Comparison c;
  for (const auto& s : sides) c.labels.push_back(s.label);
  c.steps.report = "compare_steps";
  c.steps.title = "Steps by trace";
  c.steps.columns.push_back({"Metric", Unit::kNone});
  c.classes.report = "compare_classes";
  c.classes.title = "GPU time by operation class";
  c.classes.columns.push_back({"Class", Unit::kNone});
  for (const auto& label : c.labels) {
    c.steps.columns.push_back({label + " (ns)", Unit::kNone});
    c.classes.columns.push_back({label, Unit::kDuration});
  }
  for (const auto& [metric, label] : step_metrics()) {
    std::vector<Cell> row{label + (metric == "steps" ? " (count)" : "")};
    bool any = false;
    for (const auto& s : sides) {
      const auto v = step_figure(s, metric);
      any = any || v.has_value();
      if (v) {
        row.emplace_back(*v);
      } else {
        row.emplace_back();  // empty (monostate); not a ?: of two Cells, on which GCC 12 warns (maybe-uninitialized)
      }
    }
    if (any) c.steps.rows.push_back(std::move(row));
  }
  {
    std::vector<Cell> row{std::string("Total kernel time")};
    for (const auto& s : sides) {
      std::int64_t sum = 0;
      for (const auto& r : s.runs) sum += r.total_kernel_ns;
      row.push_back(round_to(static_cast<double>(sum) / static_cast<double>(s.runs.size()), 1));
    }
    c.steps.rows.push_back(std::move(row));
  }
  // Classes in the order `ops` lists them, those present in any trace.
  for (const auto& name : operation_classes()) {
    std::vector<Cell> row{name};
    bool any = false;
    for (const auto& s : sides) {
      std::int64_t sum = 0;
      for (const auto& r : s.runs) {
        const auto it = r.classes.find(name);
        if (it != r.classes.end()) sum += it->second.total_ns;
      }
      any = any || sum > 0;
      row.push_back(static_cast<std::int64_t>(std::llround(static_cast<double>(sum) / static_cast<double>(s.runs.size()))));
    }
    if (any) c.classes.rows.push_back(std::move(row));
  }
  std::set<std::set<std::string>> gpu_sets;
  for (const auto& s : sides) {
    std::set<std::string> gpus;
    for (const auto& r : s.runs) gpus.insert(r.gpus.begin(), r.gpus.end());
    if (!gpus.empty()) gpu_sets.insert(gpus);
  }
  if (gpu_sets.size() > 1) c.notes.push_back({"different_gpus", NoteSeverity::kInfo, "the traces ran on different GPUs: differences include the hardware's"});
  return c;
}

}  // namespace kernscope
