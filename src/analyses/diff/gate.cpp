#include "analyses/diff/gate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "analyses/diff/diff.hpp"
#include "kernscope/op_classes.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/tail.hpp"
#include "base/text_pattern.hpp"

namespace kernscope {
namespace {

enum class Stat { kMean, kSum, kP50, kP95, kP99 };

// What one run gives for a metric: the samples and how they become the metric's value.
struct Samples {
  std::vector<double> values;
  Stat stat = Stat::kMean;
  std::string unit_name;  // "steps", "kernels", ...
};

double stat_of(std::vector<double> v, Stat stat) {
  if (v.empty()) return 0;
  if (stat == Stat::kSum || stat == Stat::kMean) {
    double sum = 0;
    for (double x : v) sum += x;
    return stat == Stat::kSum ? sum : sum / static_cast<double>(v.size());
  }
  std::sort(v.begin(), v.end());
  const double q = stat == Stat::kP50 ? 50 : stat == Stat::kP95 ? 95 : 99;
  // numpy's linear interpolation, as the diff's percentiles.
  const double rank = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

std::vector<double> as_double(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

bool kernel_matches(const std::string& display, const std::string& wanted, const std::string& wanted_normalized) {
  if (display == wanted) return true;
  const std::string normalized = normalize_kernel_name(display);
  if (normalized == wanted_normalized) return true;
  // The base name: `reduce_kernel` names every instantiation of at::native::reduce_kernel<...>.
  std::string base = normalized.substr(0, normalized.find_first_of("<("));
  base = base.substr(base.rfind("::") == std::string::npos ? 0 : base.rfind("::") + 2);
  return base == wanted;
}

// The slot of an account_<category> metric in RunFigures::step_category.
std::size_t category_index(const std::string& metric) {
  for (const TimeCategory c : kAllTimeCategories) {
    if (metric == "account_" + std::string(category_name(c))) return static_cast<std::size_t>(c);
  }
  return static_cast<std::size_t>(TimeCategory::kIdle);
}

// The samples of `c` in one run. `use_steps`: per-step figures (both sides have steps), else the
// durations of the operations themselves.
Result<Samples> samples_of(const GateCondition& c, const RunFigures& run, bool use_steps) {
  Samples s;
  const std::string& m = c.metric;
  if (m == "ttft") {
    s.values = as_double(run.ttft);
    s.unit_name = "prefill steps";
  } else if (m.starts_with("tpot_")) {
    s.values = as_double(run.tpot);
    s.stat = m == "tpot_mean" ? Stat::kMean : m == "tpot_p50" ? Stat::kP50 : m == "tpot_p95" ? Stat::kP95 : Stat::kP99;
    s.unit_name = "decode steps";
  } else if (m == "step_time" || m.starts_with("account_")) {
    s.values = as_double(m == "step_time" ? run.step_time : run.step_category[category_index(m)]);
    s.unit_name = "steps";
  } else if (m == "gpu_busy" || m == "gpu_idle" || m == "launch_time" || m == "sync_time" || m == "step_kernel_time") {
    s.values = as_double(m == "gpu_busy" ? run.step_busy : m == "gpu_idle" ? run.step_idle : m == "launch_time" ? run.step_launch
                         : m == "sync_time" ? run.step_sync : run.step_kernel);
    s.unit_name = "steps";
  } else if (use_steps) {  // total_kernel_time, class, kernel: time per step
    s.unit_name = "steps";
    const std::string normalized = normalize_kernel_name(c.subject);
    for (std::size_t i = 0; i < run.step_kernel.size(); ++i) {
      if (m == "total_kernel_time") {
        s.values.push_back(static_cast<double>(run.step_kernel[i]));
      } else if (m == "class") {
        // Steps split attention into its phases; `class:attention` sums them.
        double sum = 0;
        for (const auto& [name, ns] : run.step_class_ns[i]) {
          if (name == c.subject || (c.subject == "attention" && name.starts_with("attention"))) sum += static_cast<double>(ns);
        }
        s.values.push_back(sum);
      } else {
        double sum = 0;
        for (const auto& [key, ns] : run.step_kernel_ns[i]) {
          const auto it = run.kernels.find(key);
          if (it != run.kernels.end() && kernel_matches(it->second.display, c.subject, normalized)) sum += static_cast<double>(ns);
        }
        s.values.push_back(sum);
      }
    }
  } else {  // no steps: the operations' own durations, summed
    s.stat = Stat::kSum;
    s.unit_name = "operations";
    const std::string normalized = normalize_kernel_name(c.subject);
    const auto& table = m == "class" ? run.classes : run.kernels;
    for (const auto& [key, d] : table) {
      const bool take = m == "total_kernel_time" ? true
                        : m == "class"           ? (key == c.subject || (c.subject == "attention" && key.starts_with("attention")))
                                                 : kernel_matches(d.display, c.subject, normalized);
      if (take) s.values.insert(s.values.end(), d.values.begin(), d.values.end());
    }
    if (m == "total_kernel_time") {
      // memcpy/memset are classes, not kernels.
      s.values.clear();
      for (const auto& [key, d] : run.kernels) s.values.insert(s.values.end(), d.values.begin(), d.values.end());
    }
  }
  return s;
}

bool has_steps(const SideFigures& side) {
  for (const auto& r : side.runs) {
    if (r.step_kernel.empty()) return false;
  }
  return true;
}

// A deterministic generator (the same draws on every platform, unlike std's distributions).
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

std::vector<double> resample(const std::vector<double>& v, SplitMix& rng) {
  std::vector<double> out(v.size());
  for (auto& x : out) x = v[rng.below(v.size())];
  return out;
}

std::string format_change(double value, bool relative) {
  if (std::isinf(value)) return value > 0 ? "+inf %" : "-inf %";
  return relative ? fmt::format("{:+.2f} %", value) : fmt::format("{:+.3f} ms", value / 1e6);
}

}  // namespace

std::string_view gate_grammar() {
  return "--fail-if EXPRESSION, EXPRESSION := METRIC OP CHANGE\n"
         "  METRIC := ttft | tpot_p50 | tpot_p95 | tpot_p99 | tpot_mean | gpu_busy | gpu_idle | launch_time\n"
         "          | sync_time | step_kernel_time | total_kernel_time | class:CLASS | kernel:NAME\n"
         "          | step_time | account_gpu | account_communication | account_copy | account_host\n"
         "          | account_blocked | account_idle\n"
         "           (per-step figures are means per measured step; total_kernel_time, class: and kernel:\n"
         "            are time per step when both traces have steps, else whole-trace totals)\n"
         "  OP     := >  (B above A by more than CHANGE)  |  <  (B below A by more than CHANGE)\n"
         "  CHANGE := [+|-]NUMBER%  |  [+|-]NUMBER UNIT, UNIT := ns | us | ms | s\n"
         "  e.g. \"tpot_p50 > +5%\", \"class:gemv > +10%\", \"kernel:rms_norm_kernel > +2ms\", \"ttft < -10%\"";
}

Result<GateCondition> parse_gate(const std::string& expression) {
  static const auto form = TextPattern::literal(R"(^\s*(\S.*?)\s*([<>])\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*(%|ns|us|ms|s)\s*$)");
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::kInvalidArgument,
                      "malformed --fail-if \"" + expression + "\" (" + why + "); grammar:\n" + std::string(gate_grammar()));
  };
  const auto m = form.match_whole(expression);
  if (!m) return bad("expected METRIC OP CHANGE");
  GateCondition c;
  c.expression = expression;
  c.metric = std::string(m->group(1));
  c.op = m->group(2)[0];
  c.threshold = std::stod(std::string(m->group(3)));
  const std::string unit(m->group(4));
  c.relative = unit == "%";
  if (!c.relative) {
    c.threshold *= unit == "ns" ? 1.0 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : 1e9;
  }
  for (const std::string prefix : {"class:", "kernel:"}) {
    if (c.metric.starts_with(prefix)) {
      c.subject = c.metric.substr(prefix.size());
      c.metric = prefix.substr(0, prefix.size() - 1);
      if (c.subject.empty()) return bad(prefix + " needs a name");
    }
  }
  static const std::vector<std::string> plain = {"ttft",     "tpot_p50", "tpot_p95",    "tpot_p99",  "tpot_mean",
                                                 "gpu_busy", "gpu_idle", "launch_time", "sync_time", "step_kernel_time",
                                                 "total_kernel_time", "step_time", "account_gpu", "account_communication",
                                                 "account_copy", "account_host", "account_blocked", "account_idle"};
  if (c.metric != "class" && c.metric != "kernel" && std::find(plain.begin(), plain.end(), c.metric) == plain.end()) {
    return bad("unknown metric '" + c.metric + "'");
  }
  if (c.metric == "class") {
    const auto& known = operation_classes();
    if (std::find(known.begin(), known.end(), c.subject) == known.end()) return bad("unknown class '" + c.subject + "'");
  }
  return c;
}

Result<GateVerdict> evaluate_gate(const GateCondition& c, const SideFigures& a, const SideFigures& b,
                                  const BootstrapOptions& options) {
  GateVerdict v;
  v.condition = c;
  const bool use_steps = has_steps(a) && has_steps(b);
  // Each side: its runs' samples.
  std::vector<Samples> runs_a, runs_b;
  for (const auto& r : a.runs) {
    auto s = samples_of(c, r, use_steps);
    if (!s) return std::unexpected(s.error());
    runs_a.push_back(std::move(*s));
  }
  for (const auto& r : b.runs) {
    auto s = samples_of(c, r, use_steps);
    if (!s) return std::unexpected(s.error());
    runs_b.push_back(std::move(*s));
  }
  for (const auto* side : {&runs_a, &runs_b}) {
    for (const auto& s : *side) {
      if (s.values.empty()) {
        const bool matches_nothing = c.metric == "kernel" || c.metric == "class";
        if (matches_nothing && s.unit_name == "operations") continue;  // absent on one side: a new or missing kernel
        if (matches_nothing && s.unit_name == "steps") continue;
        return make_error(ErrorCode::kInvalidArgument,
                          "--fail-if \"" + c.expression + "\": " + (side == &runs_a ? "A" : "B") + " has no " + s.unit_name +
                              " to measure it on");
      }
    }
  }
  const Stat stat = runs_a.front().stat;
  const bool by_runs = runs_a.size() >= 2 && runs_b.size() >= 2;
  // Point values and one bootstrap draw, by runs (the mean of per-run values) or by pooled samples.
  auto pooled = [](const std::vector<Samples>& runs) {
    std::vector<double> all;
    for (const auto& s : runs) all.insert(all.end(), s.values.begin(), s.values.end());
    return all;
  };
  auto per_run_values = [&](const std::vector<Samples>& runs) {
    std::vector<double> out;
    for (const auto& s : runs) out.push_back(stat_of(s.values, stat));
    return out;
  };
  const std::vector<double> units_a = by_runs ? per_run_values(runs_a) : pooled(runs_a);
  const std::vector<double> units_b = by_runs ? per_run_values(runs_b) : pooled(runs_b);
  // Whole-trace sums pooled over several runs are per-run means.
  auto value_of = [&](const std::vector<double>& units, std::size_t runs) {
    if (by_runs) return stat_of(units, Stat::kMean);
    const double x = stat_of(units, stat);
    return stat == Stat::kSum ? x / static_cast<double>(runs) : x;
  };
  if (c.metric == "kernel") {
    bool any = false;
    for (const auto* units : {&units_a, &units_b}) {
      for (double x : *units) any = any || x != 0;
    }
    if (!any) {
      return make_error(ErrorCode::kInvalidArgument,
                        "--fail-if \"" + c.expression + "\": no kernel named '" + c.subject + "' in A or B");
    }
  }
  auto change_of = [&](double x, double y) {
    if (!c.relative) return y - x;
    if (x == 0) return y == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return (y / x - 1.0) * 100.0;
  };
  v.a = value_of(units_a, runs_a.size());
  v.b = value_of(units_b, runs_b.size());
  v.change = change_of(v.a, v.b);

  std::vector<double> changes;
  SplitMix rng{options.seed};
  if (!units_a.empty() && !units_b.empty()) {
    for (std::int64_t i = 0; i < options.resamples; ++i) {
      const double x = value_of(resample(units_a, rng), runs_a.size());
      const double y = value_of(resample(units_b, rng), runs_b.size());
      changes.push_back(change_of(x, y));
    }
  }
  if (changes.empty()) {
    v.low = v.high = v.change;
  } else {
    std::sort(changes.begin(), changes.end());
    const double tail = (1.0 - options.confidence) / 2.0;
    auto at = [&](double q) {
      const auto i = static_cast<std::size_t>(std::clamp(q * static_cast<double>(changes.size() - 1), 0.0,
                                                         static_cast<double>(changes.size() - 1)));
      return changes[i];
    };
    v.low = at(tail);
    v.high = at(1.0 - tail);
  }
  const std::string what = by_runs ? "runs" : runs_a.front().unit_name.empty() ? "samples" : runs_a.front().unit_name;
  v.noise_from = fmt::format("{} and {} {}", units_a.size(), units_b.size(), what);
  if (c.op == '>') {
    v.holds = v.change > c.threshold;
    v.beyond_noise = v.low > c.threshold && v.low > 0;
  } else {
    v.holds = v.change < c.threshold;
    v.beyond_noise = v.high < c.threshold && v.high < 0;
  }
  v.failed = v.holds && v.beyond_noise;
  const bool one_sample = units_a.size() < 2 || units_b.size() < 2;
  auto value_text = [](double ns) { return fmt::format("{:.3f} ms", ns / 1e6); };
  v.evidence = fmt::format(
      "{}: A {} -> B {} ({}); {:.0f} % interval of the change [{}, {}] from {} resamples of {} (seed {}){}: {}",
      c.expression, value_text(v.a), value_text(v.b), format_change(v.change, c.relative), options.confidence * 100,
      format_change(v.low, c.relative), format_change(v.high, c.relative), changes.empty() ? 0 : options.resamples,
      v.noise_from, options.seed, one_sample ? "; one sample on a side, so no noise estimate" : "",
      v.failed  ? "FAIL: the condition holds and the interval lies beyond the threshold"
      : v.holds ? "pass: the condition holds on the measured change but the interval reaches the threshold (noise)"
                : "pass: the condition does not hold");
  return v;
}

}  // namespace kernscope
