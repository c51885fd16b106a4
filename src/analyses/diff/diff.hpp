// kernscope diff: what changed between two traces (or two groups of runs) and which rows explain
// the change. A plain result — tables and a headline — that the text, CSV, JSON and HTML
// renderers consume.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyses/diff/diff_figures.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/table.hpp"

namespace kernscope {

// One kernel, class or NVTX range on both sides. With several runs a side's count and total are
// per-run means (rounded to whole counts and nanoseconds); percentiles pool every run's events.
struct DiffRow {
  std::string name;
  std::string op_class;  // kernels only
  std::int64_t count_a = 0, count_b = 0;
  std::int64_t total_a = 0, total_b = 0;
  double mean_a = 0, mean_b = 0;
  double p50_a = 0, p50_b = 0, p95_a = 0, p95_b = 0, p99_a = 0, p99_b = 0;
  std::int64_t delta() const { return total_b - total_a; }
  bool is_new() const { return count_a == 0 && count_b > 0; }
  bool is_missing() const { return count_b == 0 && count_a > 0; }
};

// One step figure (TTFT, TPOT p50, per-step GPU busy ...); absent where a side has no such steps.
struct PhaseRow {
  std::string metric;  // the gate's metric name (ttft, tpot_p50, gpu_busy ...)
  std::string label;   // what a person reads
  std::optional<double> a, b;
  bool is_count = false;  // a number of steps, not a duration
};

struct Contributor {
  std::string kind;  // "kernel"
  std::string name;
  std::int64_t delta_ns = 0;
  double share = 0;  // of the change of total kernel time (signed: against the change counts negative)
};

struct DiffResult {
  std::string label_a, label_b;
  std::size_t runs_a = 1, runs_b = 1;
  std::string identity;  // how kernels were matched
  std::vector<Note> notes;  // different GPUs, sources, nothing in common
  bool nothing_in_common = false;
  std::int64_t total_a = 0, total_b = 0;  // GPU kernel time (per-run mean with several runs)
  std::vector<PhaseRow> phases;
  std::vector<DiffRow> classes, kernels, nvtx;  // largest |delta| first
  std::vector<Contributor> headline;            // the kernels that explain most of the change
};

DiffResult diff_sides(const SideFigures& a, const SideFigures& b, std::string identity);

// The headline as sentences (first the total, then the top contributors and the notes).
std::vector<std::string> diff_headline_lines(const DiffResult& diff);

// Tables: "diff_phases" (Metric,A (ns),B (ns),Delta (ns),Delta (%); durations only), "diff_classes" (Class,...), "diff_kernels"
// (Name,Count A,Count B,Total A (ns),Total B (ns),Delta (ns),Delta (%),Mean A (ns),Mean B (ns)),
// "diff_kernel_tails" (Name,Status,P50/P95/P99 A and B), "diff_nvtx" (Range,...).
Table diff_phase_table(const DiffResult& diff);
Table diff_class_table(const DiffResult& diff);
Table diff_kernel_table(const DiffResult& diff);
Table diff_kernel_tail_table(const DiffResult& diff);
Table diff_nvtx_table(const DiffResult& diff);

// Shared by diff, compare and the gate: the step figure `metric` of one run, absent without steps.
std::optional<double> run_step_figure(const RunFigures& run, const std::string& metric);
// The step metrics in display order, with what a person reads.
const std::vector<std::pair<std::string, std::string>>& step_metrics();

double percentile_of(std::vector<std::int64_t> values, double q);
double round_to(double value, int decimals);

}  // namespace kernscope
