#include "analyses/steps/tracer_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <set>

#include "model/api_roles.hpp"
#include "base/record_kinds.hpp"

extern const char* const kernscope_builtin_tracer_cost;

namespace kernscope {
namespace {


std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t tab = line.find('\t');
    out.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return out;
    line.remove_prefix(tab + 1);
  }
}

bool cupti_matches(const std::string& row, const std::string& version) {
  if (!row.empty() && row.back() == '*') return version.starts_with(std::string_view(row).substr(0, row.size() - 1));
  return row == version;
}

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

Result<std::vector<TracerCostCalibration>> parse_tracer_cost_calibration(std::string_view tsv) {
  std::vector<TracerCostCalibration> rows;
  bool header = false;
  int number = 0;
  while (!tsv.empty()) {
    const std::size_t end = tsv.find('\n');
    std::string_view line = tsv.substr(0, end);
    tsv = end == std::string_view::npos ? std::string_view() : tsv.substr(end + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const auto cells = split_tabs(line);
    if (!header) {
      header = true;
      if (cells.size() == 6 && cells[0] == "gpu" && cells[4] == "us_per_launch") continue;
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("tracer cost table, line {}: the header must be gpu, host, cupti, kinds, us_per_launch, source", number));
    }
    if (cells.size() != 6) {
      return make_error(ErrorCode::kInvalidArgument, fmt::format("tracer cost table, line {}: {} columns, not 6", number, cells.size()));
    }
    TracerCostCalibration row{std::string(cells[0]), std::string(cells[1]), std::string(cells[2]), std::string(cells[3]),
                              std::string(cells[5]), 0};
    const auto cost = cells[4];
    const auto [ptr, ec] = std::from_chars(cost.data(), cost.data() + cost.size(), row.us_per_launch);
    if (ec != std::errc() || ptr != cost.data() + cost.size() || !(row.us_per_launch > 0) || row.gpu.empty() || row.cupti.empty() ||
        row.kinds.empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("tracer cost table, line {}: needs a GPU, a CUPTI version, kinds and a positive us_per_launch", number));
    }
    row.kinds = canonical_recorded_kinds(row.kinds);
    rows.push_back(std::move(row));
  }
  return rows;
}

const std::vector<TracerCostCalibration>& builtin_tracer_cost_calibration() {
  static const std::vector<TracerCostCalibration> rows = [] {
    auto parsed = parse_tracer_cost_calibration(kernscope_builtin_tracer_cost);
    return parsed ? *parsed : std::vector<TracerCostCalibration>{};  // tests check the built-in table parses
  }();
  return rows;
}

std::string canonical_recorded_kinds(std::string_view recorded) {
  std::string_view kinds = recorded, api;
  if (const std::size_t space = recorded.find(' '); space != std::string_view::npos) {
    kinds = recorded.substr(0, space);
    api = recorded.substr(space + 1);
  }
  if (kinds == "defaults") return "defaults";
  const bool api_all = api == "api:all";
  if (kinds == kDefaultRecordKinds && !api_all) return "defaults";
  const bool has_api = kinds.find("runtime") != std::string_view::npos || kinds.find("driver") != std::string_view::npos;
  return std::string(kinds) + (has_api && api_all ? " api:all" : "");
}

TracerCostEstimate estimate_tracer_cost(const Trace& trace, const StepAnalysis* steps,
                                        const std::vector<TracerCostCalibration>& calibration) {
  TracerCostEstimate e;
  e.kernscope_trace = trace.source.format == "kernscope-tracer";
  if (!e.kernscope_trace) return e;

  // Measured: the tracer's own time, and CUPTI's overhead records.
  std::map<std::string, TracerThreadCost> sites;
  for (const auto& c : trace.tracer_cost) {
    if (c.program_thread) {
      e.program_calls += c.calls;
      e.program_ns += c.total_ns;
      auto& s = sites[c.site];
      s.site = c.site;
      s.calls += c.calls;
      s.total_ns += c.total_ns;
      s.program_thread = true;
    } else {
      e.other_calls += c.calls;
      e.other_ns += c.total_ns;
    }
  }
  for (auto& [name, s] : sites) e.by_site.push_back(s);
  std::sort(e.by_site.begin(), e.by_site.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  if (const std::string t = trace.source.tracer_info_value("timing_cost_ns"); !t.empty()) {
    std::from_chars(t.data(), t.data() + t.size(), e.timing_cost_ns);
  }
  // Counted only where the rows were loaded with their ends (a plan may load a kind's summary columns only).
  e.overhead_loaded = (trace.loaded & bit(EventKind::kOverhead)) != 0 && trace.overhead.end_ns.size() == trace.overhead.size();
  for (RowIndex i = 0; e.overhead_loaded && i < trace.overhead.size(); ++i) {
    ++e.overhead_records;
    e.overhead_ns += trace.overhead.end_ns[i] - trace.overhead.start_ns[i];
  }

  // The keys: the GPU that ran most kernels (else the first device), CUPTI, what was recorded.
  {
    std::map<std::int64_t, std::int64_t> kernels_on;
    for (auto d : trace.kernels.device_id) ++kernels_on[d];
    const Device* chosen = nullptr;
    std::int64_t most = -1;
    for (const auto& d : trace.devices) {
      const auto it = kernels_on.find(d.id);
      const std::int64_t n = it == kernels_on.end() ? 0 : it->second;
      if (n > most) {
        most = n;
        chosen = &d;
      }
    }
    if (chosen) e.gpu = chosen->name;
  }
  e.cupti = trace.source.tracer_info_value("cupti_api_version");
  const std::string recorded = trace.source.tracer_info_value("recorded_kinds");
  e.kinds = recorded.empty() ? "" : canonical_recorded_kinds(recorded);
  e.host_cpu = trace.source.tracer_info_value("host_cpu");

  // The launches and the host time they were made in.
  const StepGroup* group = nullptr;
  if (steps) {
    for (const auto& g : steps->groups) {
      if (g.wall.count > 0 && (!group || g.wall.count >= group->wall.count)) group = &g;
    }
  }
  ApiRoleCache role_of(trace.strings);
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
  const bool api_ends = trace.api_calls.end_ns.size() == trace.api_calls.size() && trace.api_calls.name.size() == trace.api_calls.size();
  for (RowIndex i = 0; api_ends && i < trace.api_calls.size(); ++i) {
    e.total_launches += has_any(role_of(trace.api_calls.name[i]), kAnyLaunch);
    first = std::min(first, trace.api_calls.start_ns[i]);
    last = std::max(last, trace.api_calls.end_ns[i]);
  }
  if (group) {
    e.basis = fmt::format("{} (median of {} steps)", group->name, group->wall.count);
    e.launches = group->launches.p50;
    e.host_ns = group->wall.p50;
  } else if (e.total_launches > 0) {
    e.basis = "the whole trace (no steps found)";
    e.launches = static_cast<double>(e.total_launches);
    e.host_ns = static_cast<double>(last - first);
  }

  // The calibration row.
  if (e.cupti.empty() || recorded.empty()) {
    e.not_estimated = "the trace does not say its CUPTI version and recorded kinds (written by a tracer older than its cost measurement)";
    return e;
  }
  for (const auto& row : calibration) {
    if (lower(row.gpu) == lower(e.gpu) && cupti_matches(row.cupti, e.cupti) && row.kinds == e.kinds) {
      e.calibration = row;
      break;
    }
  }
  if (!e.calibration) {
    std::set<std::string> known;
    for (const auto& row : calibration) known.insert(fmt::format("{} / CUPTI {} / {}", row.gpu, row.cupti, row.kinds));
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : "; ") + k;
    e.not_estimated = fmt::format("no calibration for {} with CUPTI {} recording {} in data/tracer_cost.tsv (it has: {})",
                                  e.gpu.empty() ? "an unnamed GPU" : e.gpu, e.cupti, e.kinds, list.empty() ? "no rows" : list);
    return e;
  }
  if (e.launches <= 0 || e.host_ns <= 0) {
    e.not_estimated = "the trace has no kernel launches to apply the per-launch cost to";
    return e;
  }
  e.added_ns = e.launches * e.calibration->us_per_launch * 1000.0;
  if (e.added_ns >= e.host_ns) {
    e.not_estimated = fmt::format(
        "the calibrated cost ({:.0f} launches x {:.1f} us = {}) is not below the host time it would be part of ({}): this "
        "program does not launch as the calibration's workload did",
        e.launches, e.calibration->us_per_launch, ms(e.added_ns), ms(e.host_ns));
    return e;
  }
  e.inflation_percent = 100.0 * e.added_ns / (e.host_ns - e.added_ns);
  return e;
}

StepCorrection correct_step_times(const StepAnalysis& steps, const TracerCostEstimate& estimate) {
  StepCorrection c;
  if (!estimate.kernscope_trace) {
    c.why = "not a trace of kernscope's tracer: its cost is not known";
    return c;
  }
  if (!estimate.calibration || !estimate.not_estimated.empty()) {
    c.why = "no sound estimate: " + estimate.not_estimated;
    return c;
  }
  const double per_launch_ns = estimate.calibration->us_per_launch * 1000.0;
  for (const auto& s : steps.steps) {
    const double added = static_cast<double>(s.launches) * per_launch_ns;
    double removed = added;
    if (removed > static_cast<double>(s.gpu_idle_ns)) {
      removed = static_cast<double>(s.gpu_idle_ns);
      ++c.capped;
    }
    c.corrected_ns.push_back(s.wall_ns - static_cast<std::int64_t>(removed + 0.5));
  }
  c.sound = true;
  c.why = fmt::format("each step's wall less its launches x {:.1f} us (calibrated on {}), at most its GPU idle time{}", estimate.calibration->us_per_launch,
                      estimate.calibration->host,
                      c.capped > 0 ? fmt::format(" ({} of {} steps capped: the GPU was busy while the host launched, so the "
                                                 "tracer's time hid behind GPU work)",
                                                 c.capped, steps.steps.size())
                                   : std::string());
  return c;
}

}  // namespace kernscope
