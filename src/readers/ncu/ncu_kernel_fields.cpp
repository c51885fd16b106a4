// From the metrics of one profiled kernel to what a roofline needs. Which counters give what is
// in ../shared/reference/gpu-and-roofline.md §2: FLOPs from the tensor-path operation counters
// (sm__ops_path_tensor_*, 2 per FMA, exact) and the FP-pipe thread-instruction counters (add +
// mul + 2 x fma per precision); tensor *instruction* counts are not FLOPs except on V100.
#include <algorithm>
#include <set>

#include "base/nsys_demangle.hpp"
#include "base/text_pattern.hpp"
#include "readers/ncu/ncu_report.hpp"

namespace kernscope::readers::ncu {
namespace {

using Metrics = std::map<std::string, NcuMetric>;

std::optional<double> get(const Metrics& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? std::nullopt : std::optional<double>(it->second.value);
}

struct Total {
  double value = 0;
  bool exact = true;
  std::string metric;
};

// The duration in seconds, for totals derived from per-second rates.
std::optional<double> duration_s(const Metrics& m) {
  const auto it = m.find("gpu__time_duration.sum");
  if (it == m.end() || it->second.unit != "ns") return std::nullopt;
  return it->second.value / 1e9;
}

// A counter's total over the kernel: its .sum, else its rate times what the rate is per (the
// unit's elapsed cycles, or the duration). `base` is the counter without rollup ("dram__bytes").
std::optional<Total> counter_total(const Metrics& m, const std::string& base) {
  if (auto v = get(m, base + ".sum")) return Total{*v, true, base + ".sum"};
  const std::string unit = base.substr(0, base.find("__"));
  if (auto rate = get(m, base + ".sum.per_cycle_elapsed")) {
    if (auto cycles = get(m, unit + "__cycles_elapsed.avg")) {
      return Total{*rate * *cycles, false, base + ".sum.per_cycle_elapsed x " + unit + "__cycles_elapsed.avg"};
    }
  }
  if (auto rate = get(m, base + ".sum.per_second")) {
    if (auto s = duration_s(m)) return Total{*rate * *s, false, base + ".sum.per_second x gpu__time_duration.sum"};
  }
  return std::nullopt;
}

// ncu's derived__* metrics are plain values or rates; their unit says which.
std::optional<Total> derived_total(const Metrics& m, const std::string& name) {
  const auto it = m.find(name);
  if (it == m.end()) return std::nullopt;
  const std::string& unit = it->second.unit;
  if (unit.ends_with("/cycle")) {
    // derived__<unit>__... rates are per cycle of the counter's unit.
    const std::string rest = name.substr(std::string("derived__").size());
    const std::string unit_name = rest.substr(0, rest.find("__"));
    if (auto cycles = get(m, unit_name + "__cycles_elapsed.avg")) {
      return Total{it->second.value * *cycles, false, name + " x " + unit_name + "__cycles_elapsed.avg"};
    }
    return std::nullopt;
  }
  if (unit.ends_with("/second")) {
    if (auto s = duration_s(m)) return Total{it->second.value * *s, false, name + " x gpu__time_duration.sum"};
    return std::nullopt;
  }
  return Total{it->second.value, true, name};
}

// The counter base names present in any rollup or rate form.
std::set<std::string> counter_bases(const Metrics& m, std::string_view prefix) {
  std::set<std::string> bases;
  for (const auto& [name, metric] : m) {
    if (!name.starts_with(prefix)) continue;
    for (const std::string_view suffix : {".sum", ".sum.per_cycle_elapsed", ".sum.per_second"}) {
      if (name.ends_with(suffix)) bases.insert(name.substr(0, name.size() - suffix.size()));
    }
  }
  return bases;
}

// Tensor work: sm__ops_path_tensor_[op_<op>_]src_<types>[_dst_<type>][_sparsity_<on|off>].
// Per source type, the aggregate counters (no op) when there are any, else the sum over the ops;
// per op, a counter without destination when there is one, else the sum over destinations; per
// destination, the counter without sparsity qualifier when there is one, else off + on. Each FLOP
// is then counted once however many overlapping counters the export holds.
void tensor_flops(const Metrics& m, std::vector<FlopTerm>& out) {
  static const auto kName = TextPattern::literal(R"(^sm__ops_path_tensor_(?:op_([a-z0-9]+)_)?src_(.+?)(?:_dst_([a-z0-9]+))?(?:_sparsity_(on|off))?$)");
  struct Counter {
    std::string op, dst, sparsity, base;
  };
  std::map<std::string, std::vector<Counter>> by_type;
  for (const std::string& base : counter_bases(m, "sm__ops_path_tensor_")) {
    const auto match = kName.match_whole(base);
    if (!match) continue;
    by_type[std::string(match->group(2))].push_back(
        Counter{std::string(match->group(1)), std::string(match->group(3)), std::string(match->group(4)), base});
  }
  for (auto& [type, counters] : by_type) {
    const bool has_aggregate = std::ranges::any_of(counters, [](const Counter& c) { return c.op.empty(); });
    std::erase_if(counters, [&](const Counter& c) { return has_aggregate != c.op.empty(); });
    FlopTerm term{type, true, 0, true, {}};
    std::set<std::string> ops;
    for (const auto& c : counters) ops.insert(c.op);
    for (const std::string& op : ops) {
      std::vector<Counter> mine;
      for (const auto& c : counters) {
        if (c.op == op) mine.push_back(c);
      }
      const bool has_all_dst = std::ranges::any_of(mine, [](const Counter& c) { return c.dst.empty(); });
      std::erase_if(mine, [&](const Counter& c) { return has_all_dst != c.dst.empty(); });
      std::set<std::string> dsts;
      for (const auto& c : mine) dsts.insert(c.dst);
      for (const std::string& dst : dsts) {
        std::vector<const Counter*> chosen;
        for (const auto& c : mine) {
          if (c.dst == dst && c.sparsity.empty()) chosen = {&c};
        }
        if (chosen.empty()) {
          for (const auto& c : mine) {
            if (c.dst == dst) chosen.push_back(&c);
          }
        }
        for (const Counter* c : chosen) {
          if (auto total = counter_total(m, c->base)) {
            term.flops += total->value;
            term.exact = term.exact && total->exact;
            term.metrics.push_back(total->metric);
          }
        }
      }
    }
    if (!term.metrics.empty()) out.push_back(std::move(term));
  }
}

// FP pipes: (sm|smsp)__sass_thread_inst_executed_op_<p><add|mul|fma>_pred_on, FMA counting 2.
void pipe_flops(const Metrics& m, std::vector<FlopTerm>& out, std::vector<Note>& notes) {
  static const std::array<std::pair<char, const char*>, 3> kPrecisions = {{{'d', "fp64"}, {'f', "fp32"}, {'h', "fp16"}}};
  for (const auto& [p, precision] : kPrecisions) {
    FlopTerm term{precision, false, 0, true, {}};
    std::vector<std::string> missing;
    for (const std::string op : {"add", "mul", "fma"}) {
      const double weight = op == "fma" ? 2 : 1;
      std::optional<Total> total;
      for (const char* unit : {"sm", "smsp"}) {
        total = counter_total(m, std::string(unit) + "__sass_thread_inst_executed_op_" + p + op + "_pred_on");
        if (total) break;
      }
      if (!total && op == "fma") {
        // ncu's roofline sections give FMAs already doubled.
        for (const char* unit : {"sm", "smsp"}) {
          total = derived_total(m, std::string("derived__") + unit + "__sass_thread_inst_executed_op_" + p + "fma_pred_on_x2");
          if (total) break;
        }
        if (total) {
          term.flops += total->value;
          term.exact = term.exact && total->exact;
          term.metrics.push_back(total->metric);
          continue;
        }
      }
      if (!total) {
        missing.push_back(std::string(1, p) + op);
        continue;
      }
      term.flops += weight * total->value;
      term.exact = term.exact && total->exact;
      term.metrics.push_back(total->metric);
    }
    if (term.metrics.empty()) continue;
    if (!missing.empty()) {
      std::string list;
      for (const auto& x : missing) list += (list.empty() ? "" : ", ") + x;
      notes.push_back({"flop_counters_missing", NoteSeverity::kInfo, std::string(precision) + " FLOPs counted without " + list + " (not in the export)",
                       static_cast<std::int64_t>(missing.size())});
    }
    out.push_back(std::move(term));
  }
}

void derive_flops(NcuKernel& k) {
  const Metrics& m = k.metrics;
  k.flops.clear();
  k.flop_notes.clear();
  tensor_flops(m, k.flops);
  pipe_flops(m, k.flops, k.flop_notes);
  const bool has_tensor = std::ranges::any_of(k.flops, [](const FlopTerm& t) { return t.tensor; });
  if (has_tensor) return;
  const auto instructions = counter_total(m, "sm__inst_executed_pipe_tensor");
  if (!instructions || instructions->value <= 0) return;
  if (k.compute_capability == "7.0") {
    // Volta's HMMA.884 does 512 FLOPs per warp instruction (NERSC's roofline method).
    k.flops.push_back(FlopTerm{"fp16", true, 512 * instructions->value, instructions->exact,
                               {instructions->metric + " x 512 (V100)"}});
    return;
  }
  k.flop_notes.push_back({"tensor_flops_unknown", NoteSeverity::kInfo,
                          "tensor-pipe instructions were counted (" + instructions->metric +
                              ") but no sm__ops_path_tensor_* counter: FLOPs per instruction vary by kernel on "
                              "compute capability " + (k.compute_capability.empty() ? "?" : k.compute_capability) +
                              ", so tensor FLOPs are unknown (collect the roofline sections)"});
}

void derive_bytes(NcuKernel& k) {
  const Metrics& m = k.metrics;
  k.dram_read_bytes = k.dram_write_bytes = k.dram_bytes = std::nullopt;
  k.dram_bytes_exact = true;
  k.dram_bytes_metric.clear();
  auto read = counter_total(m, "dram__bytes_read");
  auto write = counter_total(m, "dram__bytes_write");
  if (!read || !write) {
    // 32-byte sectors, where the export counted those instead.
    auto sectors_read = counter_total(m, "dram__sectors_read");
    auto sectors_write = counter_total(m, "dram__sectors_write");
    if (sectors_read && sectors_write) {
      read = Total{sectors_read->value * 32, sectors_read->exact, sectors_read->metric + " x 32"};
      write = Total{sectors_write->value * 32, sectors_write->exact, sectors_write->metric + " x 32"};
    }
  }
  if (read && write) {
    k.dram_read_bytes = read->value;
    k.dram_write_bytes = write->value;
    k.dram_bytes = read->value + write->value;
    k.dram_bytes_exact = read->exact && write->exact;
    k.dram_bytes_metric = read->metric + " + " + write->metric;
    return;
  }
  if (auto total = counter_total(m, "dram__bytes")) {
    k.dram_bytes = total->value;
    k.dram_bytes_exact = total->exact;
    k.dram_bytes_metric = total->metric;
  }
}

void derive_stalls(NcuKernel& k) {
  // Families in order of preference: ncu's Warp State Statistics (warps stalled per issued
  // instruction), the share of active warps, then PC-sampling counts.
  static const std::array<std::pair<TextPattern, const char*>, 3> kFamilies = {{
      {TextPattern::literal(R"(^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$)"),
       "smsp__average_warps_issue_stalled_*_per_issue_active.ratio (warps stalled per issued instruction)"},
      {TextPattern::literal(R"(^smsp__warp_issue_stalled_(\w+)_per_warp_active\.pct$)"),
       "smsp__warp_issue_stalled_*_per_warp_active.pct (% of active warps)"},
      {TextPattern::literal(R"(^smsp__pcsamp_warps_issue_stalled_(\w+)$)"), "smsp__pcsamp_warps_issue_stalled_* (samples)"},
  }};
  k.stalls.clear();
  k.stall_metric.clear();
  for (const auto& [pattern, label] : kFamilies) {
    std::vector<StallReason> found;
    for (const auto& [name, metric] : k.metrics) {
      const auto match = pattern.match_whole(name);
      if (!match) continue;
      const std::string reason(match->group(1));
      if (reason == "selected" || reason.ends_with("_not_issued")) continue;
      found.push_back(StallReason{reason, metric.value});
    }
    if (found.empty()) continue;
    std::ranges::stable_sort(found, [](const StallReason& a, const StallReason& b) { return a.value > b.value; });
    k.stalls = std::move(found);
    k.stall_metric = label;
    return;
  }
}

std::optional<double> percent(const Metrics& m, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const auto it = m.find(n);
    if (it != m.end() && it->second.unit == "%") return it->second.value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> NcuKernel::total_flops() const {
  if (flops.empty()) return std::nullopt;
  double total = 0;
  for (const auto& t : flops) total += t.flops;
  return total;
}

std::optional<std::array<std::int32_t, 3>> parse_dim3(std::string_view text) {
  static const auto kDim = TextPattern::literal(R"(^\s*\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*$)");
  const auto match = kDim.match_whole(text);
  if (!match) return std::nullopt;
  std::array<std::int32_t, 3> dims{};
  for (int i = 0; i < 3; ++i) {
    const long long v = std::stoll(std::string(match->group(static_cast<std::size_t>(i) + 1)));
    if (v > 0x7FFFFFFF) return std::nullopt;
    dims[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(v);
  }
  return dims;
}

std::string ncu_function_name(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  // Kernels return void; ncu prints the return type first.
  if (name.starts_with("void ")) name.remove_prefix(5);
  name = name.substr(0, name.find_first_of("<("));
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  const std::size_t colons = name.rfind("::");
  if (colons != std::string_view::npos) name = name.substr(colons + 2);
  return std::string(name);
}

void derive_kernel_fields(NcuKernel& k) {
  const Metrics& m = k.metrics;
  if (k.name.starts_with("_Z")) {
    k.mangled = k.name;
    k.demangled = nsys_demangle(k.name);
  } else {
    k.demangled = k.name;
  }
  k.join_name = ncu_function_name(k.demangled);

  k.duration_ns = std::nullopt;
  for (const char* name : {"gpu__time_duration.sum", "gpu__time_duration.avg"}) {
    const auto it = m.find(name);
    if (it != m.end() && it->second.unit == "ns") {
      k.duration_ns = it->second.value;
      break;
    }
  }
  derive_bytes(k);
  derive_flops(k);
  derive_stalls(k);
  k.sm_throughput_pct = percent(m, {"sm__throughput.avg.pct_of_peak_sustained_elapsed"});
  k.memory_throughput_pct = percent(m, {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"});
  k.dram_throughput_pct = percent(m, {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                      "dram__throughput.avg.pct_of_peak_sustained_elapsed"});
  k.tensor_pipe_pct = percent(m, {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                                  "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                                  "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                                  "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
                                  "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active"});
  k.l2_hit_rate_pct = percent(m, {"lts__t_sector_hit_rate.pct"});
  k.achieved_occupancy_pct = percent(m, {"sm__warps_active.avg.pct_of_peak_sustained_active"});
  k.sm_clock_hz = std::nullopt;
  for (const char* name : {"sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second"}) {
    const auto it = m.find(name);
    if (it != m.end() && it->second.unit == "hz") {
      k.sm_clock_hz = it->second.value;
      break;
    }
  }
}

}  // namespace kernscope::readers::ncu
