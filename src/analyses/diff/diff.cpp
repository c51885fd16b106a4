#include "analyses/diff/diff.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "analyses/steps/step_accounting.hpp"
#include "analyses/tail.hpp"

namespace kernscope {
namespace {

double mean_of(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (auto x : v) sum += static_cast<double>(x);
  return sum / static_cast<double>(v.size());
}

// A side's rows of one kind (kernels, classes or NVTX) merged over its runs: per-run means of
// counts and totals, every event's duration pooled.
struct Merged {
  std::string display, op_class;
  std::int64_t count_sum = 0, total_sum = 0;
  std::vector<std::int64_t> values;
};

std::map<std::string, Merged> merge(const SideFigures& side, std::map<std::string, Durations> RunFigures::*member) {
  std::map<std::string, Merged> out;
  for (const auto& run : side.runs) {
    for (const auto& [key, d] : run.*member) {
      auto& m = out[key];
      if (m.display.empty()) {
        m.display = d.display;
        m.op_class = d.op_class;
      }
      m.count_sum += d.count;
      m.total_sum += d.total_ns;
      m.values.insert(m.values.end(), d.values.begin(), d.values.end());
    }
  }
  return out;
}

std::int64_t per_run(std::int64_t sum, std::size_t runs) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(sum) / static_cast<double>(runs)));
}

std::vector<DiffRow> diff_rows(const SideFigures& a, const SideFigures& b, std::map<std::string, Durations> RunFigures::*member) {
  const auto ma = merge(a, member), mb = merge(b, member);
  std::set<std::string> keys;
  for (const auto& [k, v] : ma) keys.insert(k);
  for (const auto& [k, v] : mb) keys.insert(k);
  std::vector<DiffRow> rows;
  for (const auto& key : keys) {
    DiffRow r;
    auto fill = [&](const std::map<std::string, Merged>& m, std::size_t runs, std::int64_t& count, std::int64_t& total,
                    double& mean, double& p50, double& p95, double& p99) {
      auto it = m.find(key);
      if (it == m.end()) return;
      if (r.name.empty()) r.name = it->second.display;
      if (r.op_class.empty()) r.op_class = it->second.op_class;
      count = per_run(it->second.count_sum, runs);
      total = per_run(it->second.total_sum, runs);
      mean = round_to(mean_of(it->second.values), 1);
      p50 = percentile_of(it->second.values, 50);
      p95 = percentile_of(it->second.values, 95);
      p99 = percentile_of(it->second.values, 99);
    };
    fill(ma, a.runs.size(), r.count_a, r.total_a, r.mean_a, r.p50_a, r.p95_a, r.p99_a);
    fill(mb, b.runs.size(), r.count_b, r.total_b, r.mean_b, r.p50_b, r.p95_b, r.p99_b);
    rows.push_back(std::move(r));
  }
  // The rows that explain most of the change first; equal changes by name, for a stable order.
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    const auto dx = std::llabs(x.delta()), dy = std::llabs(y.delta());
    if (dx != dy) return dx > dy;
    return x.name < y.name;
  });
  return rows;
}

std::optional<double> side_step_figure(const SideFigures& side, const std::string& metric) {
  // Several runs: the figure over every run's steps pooled (percentiles) — the same samples the
  // gate resamples.
  RunFigures pooled;
  bool any = false;
  for (const auto& run : side.runs) {
    auto add = [](std::vector<std::int64_t>& to, const std::vector<std::int64_t>& from) {
      to.insert(to.end(), from.begin(), from.end());
    };
    add(pooled.tpot, run.tpot);
    add(pooled.ttft, run.ttft);
    add(pooled.step_busy, run.step_busy);
    add(pooled.step_idle, run.step_idle);
    add(pooled.step_launch, run.step_launch);
    add(pooled.step_sync, run.step_sync);
    add(pooled.step_kernel, run.step_kernel);
    add(pooled.step_time, run.step_time);
    for (std::size_t c = 0; c < kTimeCategories; ++c) add(pooled.step_category[c], run.step_category[c]);
    any = true;
  }
  if (!any) return std::nullopt;
  if (metric == "steps") {
    if (pooled.step_busy.empty()) return std::nullopt;
    return static_cast<double>(pooled.step_busy.size()) / static_cast<double>(side.runs.size());
  }
  return run_step_figure(pooled, metric);
}

double pct(double a, double b) { return a == 0 ? std::nan("") : round_to((b - a) / a * 100.0, 1); }

Cell pct_cell(double a, double b) {
  if (a == 0) return std::monostate{};
  return pct(a, b);
}

Table rows_table(const std::string& report, const std::string& title, const std::string& first,
                 const std::vector<DiffRow>& rows) {
  Table t;
  t.report = report;
  t.title = title;
  t.columns = {{first, Unit::kNone},          {"Count A", Unit::kNone},    {"Count B", Unit::kNone},
               {"Total A", Unit::kDuration},  {"Total B", Unit::kDuration}, {"Delta", Unit::kDuration},
               {"Delta", Unit::kPercent},     {"Mean A", Unit::kDuration}, {"Mean B", Unit::kDuration}};
  for (const auto& r : rows) {
    t.rows.push_back({r.name, r.count_a, r.count_b, r.total_a, r.total_b, r.delta(),
                      pct_cell(static_cast<double>(r.total_a), static_cast<double>(r.total_b)),
                      r.count_a ? Cell(r.mean_a) : Cell(std::monostate{}),
                      r.count_b ? Cell(r.mean_b) : Cell(std::monostate{})});
  }
  return t;
}

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string signed_ms(double ns) { return fmt::format("{:+.3f} ms", ns / 1e6); }

}  // namespace

double round_to(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

double percentile_of(std::vector<std::int64_t> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return round_to(percentile_linear(values, q), 1);
}

const std::vector<std::pair<std::string, std::string>>& step_metrics() {
  static const std::vector<std::pair<std::string, std::string>> metrics = {
      {"ttft", "TTFT"},
      {"tpot_p50", "TPOT p50"},
      {"tpot_p95", "TPOT p95"},
      {"tpot_p99", "TPOT p99"},
      {"tpot_mean", "TPOT mean"},
      {"steps", "Steps measured"},
      {"gpu_busy", "GPU busy per step"},
      {"gpu_idle", "GPU idle per step"},
      {"launch_time", "Launch API time per step"},
      {"sync_time", "Sync time per step"},
      {"step_kernel_time", "Kernel time per step"},
      // The accounting of the measured steps: their time and where it goes, per step.
      {"step_time", "Step time per step"},
      {"account_gpu", "gpu per step"},
      {"account_communication", "communication per step"},
      {"account_copy", "copy per step"},
      {"account_host", "host per step"},
      {"account_blocked", "blocked per step"},
      {"account_idle", "idle per step"},
  };
  return metrics;
}

std::optional<double> run_step_figure(const RunFigures& run, const std::string& metric) {
  auto mean_or_none = [](const std::vector<std::int64_t>& v) -> std::optional<double> {
    if (v.empty()) return std::nullopt;
    return round_to(mean_of(v), 1);
  };
  if (metric == "ttft") return mean_or_none(run.ttft);
  if (metric.starts_with("tpot_")) {
    if (run.tpot.empty()) return std::nullopt;
    if (metric == "tpot_mean") return round_to(mean_of(run.tpot), 1);
    const double q = metric == "tpot_p50" ? 50 : metric == "tpot_p95" ? 95 : 99;
    return percentile_of(run.tpot, q);
  }
  if (metric == "steps") return run.step_busy.empty() ? std::nullopt : std::optional<double>(static_cast<double>(run.step_busy.size()));
  if (metric == "gpu_busy") return mean_or_none(run.step_busy);
  if (metric == "gpu_idle") return mean_or_none(run.step_idle);
  if (metric == "launch_time") return mean_or_none(run.step_launch);
  if (metric == "sync_time") return mean_or_none(run.step_sync);
  if (metric == "step_kernel_time") return mean_or_none(run.step_kernel);
  if (metric == "step_time") return mean_or_none(run.step_time);
  for (const TimeCategory c : kAllTimeCategories) {
    if (metric == "account_" + std::string(category_name(c))) return mean_or_none(run.step_category[static_cast<std::size_t>(c)]);
  }
  return std::nullopt;
}

DiffResult diff_sides(const SideFigures& a, const SideFigures& b, std::string identity) {
  DiffResult d;
  d.label_a = a.label;
  d.label_b = b.label;
  d.runs_a = a.runs.size();
  d.runs_b = b.runs.size();
  d.identity = std::move(identity);
  d.kernels = diff_rows(a, b, &RunFigures::kernels);
  d.classes = diff_rows(a, b, &RunFigures::classes);
  d.nvtx = diff_rows(a, b, &RunFigures::nvtx);
  std::int64_t sum_a = 0, sum_b = 0;
  for (const auto& r : a.runs) sum_a += r.total_kernel_ns;
  for (const auto& r : b.runs) sum_b += r.total_kernel_ns;
  d.total_a = per_run(sum_a, a.runs.size());
  d.total_b = per_run(sum_b, b.runs.size());
  for (const auto& [metric, label] : step_metrics()) {
    PhaseRow row{metric, label, side_step_figure(a, metric), side_step_figure(b, metric), metric == "steps"};
    if (row.a || row.b) d.phases.push_back(std::move(row));
  }

  // Notes: what makes the comparison harder to read.
  auto gpus = [](const SideFigures& s) {
    std::set<std::string> out;
    for (const auto& r : s.runs) out.insert(r.gpus.begin(), r.gpus.end());
    return out;
  };
  auto joined = [](const std::set<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? std::string("not recorded") : out;
  };
  const auto ga = gpus(a), gb = gpus(b);
  if (!ga.empty() && !gb.empty() && ga != gb) {
    d.notes.push_back({"different_gpus", NoteSeverity::kInfo,
                       "the traces ran on different GPUs (A: " + joined(ga) + "; B: " + joined(gb) + "): differences include the hardware's"});
  }
  std::set<std::string> formats;
  for (const auto* s : {&a, &b}) {
    for (const auto& r : s->runs) formats.insert(r.source_format);
  }
  if (formats.size() > 1) {
    d.notes.push_back({"different_sources", NoteSeverity::kInfo,
                       "the traces come from different sources (" + joined(formats) + "): kernels matched by " + d.identity});
  }
  // Said as `ops` says it: the class table leaves out each run's setup before its first step.
  for (const auto& [name, side] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    for (std::size_t r = 0; r < side->runs.size(); ++r) {
      if (side->runs[r].setup_note.empty()) continue;
      const std::string which = side->runs.size() > 1 ? std::string(name) + " run " + std::to_string(r + 1) : std::string(name);
      d.notes.push_back({"setup_left_out", NoteSeverity::kInfo, which + ": " + side->runs[r].setup_note});
    }
  }
  std::size_t shared = 0;
  for (const auto& r : d.kernels) shared += r.count_a > 0 && r.count_b > 0;
  if (shared == 0) {
    d.nothing_in_common = true;
    d.notes.push_back({"nothing_in_common", NoteSeverity::kInfo,
                       "A and B have no kernel in common (matched by " + d.identity + "): they are different programs, or one holds no kernels"});
  }

  // Headline: the kernels that explain most of the change in total kernel time.
  const std::int64_t change = d.total_b - d.total_a;
  for (const auto& r : d.kernels) {
    if (d.headline.size() == 5 || r.delta() == 0) break;
    d.headline.push_back({"kernel", r.name, r.delta(),
                          change == 0 ? 0.0 : round_to(static_cast<double>(r.delta()) / static_cast<double>(change) * 100.0, 1)});
  }
  return d;
}

std::vector<std::string> diff_headline_lines(const DiffResult& d) {
  std::vector<std::string> lines;
  // The step time first, per step (windows of different length make totals misleading), with the
  // categories of the accounting that moved; the raw totals follow.
  const PhaseRow* step_time = nullptr;
  std::vector<const PhaseRow*> moved;
  for (const auto& p : d.phases) {
    if (p.metric == "step_time" && p.a && p.b) step_time = &p;
    if (p.metric.starts_with("account_") && p.a && p.b && *p.b != *p.a) moved.push_back(&p);
  }
  if (step_time) {
    const double a = *step_time->a, b = *step_time->b;
    lines.push_back(fmt::format("Step time (mean per measured step, from its start until its range or GPU work ends): A {} -> B {} ({}{})",
                                ms(a), ms(b), signed_ms(b - a), a ? fmt::format(", {:+.1f} %", (b - a) / a * 100) : ""));
    std::stable_sort(moved.begin(), moved.end(), [](const PhaseRow* x, const PhaseRow* y) {
      return std::abs(*x->b - *x->a) > std::abs(*y->b - *y->a);
    });
    std::string what;
    for (const PhaseRow* p : moved) {
      if (std::abs(*p->b - *p->a) < 0.01 * a) continue;  // under 1 % of A's step: not a mover
      what += fmt::format("{}{} {}", what.empty() ? "" : ", ", p->metric.substr(std::string("account_").size()), signed_ms(*p->b - *p->a));
    }
    if (!what.empty()) lines.push_back("Per step, what moved (kernscope account): " + what);
  }
  const double change = static_cast<double>(d.total_b - d.total_a);
  lines.push_back(fmt::format("GPU kernel time{}: A {} -> B {} ({}{})", step_time ? " (raw totals over each trace)" : "",
                              ms(static_cast<double>(d.total_a)),
                              ms(static_cast<double>(d.total_b)), signed_ms(change),
                              d.total_a ? fmt::format(", {:+.1f} %", change / static_cast<double>(d.total_a) * 100) : ""));
  for (const auto& p : d.phases) {
    if (p.is_count) {
      auto count = [](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("none"); };
      lines.push_back("Steps measured: A " + count(p.a) + ", B " + count(p.b));
    }
    if (p.metric != "tpot_p50" && p.metric != "ttft") continue;
    if (p.a && p.b) {
      lines.push_back(fmt::format("{}: A {} -> B {} ({}, {:+.1f} %)", p.label, ms(*p.a), ms(*p.b), signed_ms(*p.b - *p.a),
                                  *p.a ? (*p.b - *p.a) / *p.a * 100 : 0.0));
    }
  }
  if (!d.headline.empty()) lines.push_back("Most of the change (share of the total kernel-time change):");
  for (const auto& c : d.headline) {
    lines.push_back(fmt::format("  {} {:>7.1f} %  {}", signed_ms(static_cast<double>(c.delta_ns)), c.share, c.name));
  }
  std::size_t added = 0, removed = 0;
  for (const auto& r : d.kernels) {
    added += r.is_new();
    removed += r.is_missing();
  }
  lines.push_back(fmt::format("Kernels: {} only in B (new), {} only in A (missing); matched by {}", added, removed, d.identity));
  for (const auto& n : d.notes) lines.push_back("Note: " + n.text);
  return lines;
}

Table diff_phase_table(const DiffResult& d) {
  Table t;
  t.report = "diff_phases";
  t.title = "Steps: A vs B";
  t.columns = {{"Metric", Unit::kNone}, {"A", Unit::kDuration}, {"B", Unit::kDuration}, {"Delta", Unit::kDuration},
               {"Delta", Unit::kPercent}};
  for (const auto& p : d.phases) {
    if (p.is_count) continue;  // the number of steps is in the headline; this table holds durations
    auto cell = [](const std::optional<double>& v) { return v ? Cell(*v) : Cell(std::monostate{}); };
    t.rows.push_back({p.label, cell(p.a), cell(p.b),
                      p.a && p.b ? Cell(round_to(*p.b - *p.a, 1)) : Cell(std::monostate{}),
                      p.a && p.b ? pct_cell(*p.a, *p.b) : Cell(std::monostate{})});
  }
  return t;
}

Table diff_class_table(const DiffResult& d) {
  return rows_table("diff_classes", "Operation classes: A vs B", "Class", d.classes);
}

Table diff_kernel_table(const DiffResult& d) {
  return rows_table("diff_kernels", "Kernels: A vs B", "Name", d.kernels);
}

Table diff_nvtx_table(const DiffResult& d) {
  return rows_table("diff_nvtx", "NVTX ranges: A vs B", "Range", d.nvtx);
}

Table diff_kernel_tail_table(const DiffResult& d) {
  Table t;
  t.report = "diff_kernel_tails";
  t.title = "Kernel percentiles: A vs B";
  t.columns = {{"Name", Unit::kNone},      {"Status", Unit::kNone},    {"Class", Unit::kNone},
               {"P50 A", Unit::kDuration}, {"P50 B", Unit::kDuration}, {"P95 A", Unit::kDuration},
               {"P95 B", Unit::kDuration}, {"P99 A", Unit::kDuration}, {"P99 B", Unit::kDuration}};
  for (const auto& r : d.kernels) {
    auto a = [&](double v) { return r.count_a ? Cell(v) : Cell(std::monostate{}); };
    auto b = [&](double v) { return r.count_b ? Cell(v) : Cell(std::monostate{}); };
    t.rows.push_back({r.name, std::string(r.is_new() ? "new" : r.is_missing() ? "missing" : "both"), r.op_class,
                      a(r.p50_a), b(r.p50_b), a(r.p95_a), b(r.p95_b), a(r.p99_a), b(r.p99_b)});
  }
  return t;
}

}  // namespace kernscope
