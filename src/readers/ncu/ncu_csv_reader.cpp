// The two CSV layouts of `ncu --csv`: the raw page (wide: one row per launch, a units row under
// the header) and the details page (long: one row per kernel, section and metric or rule).
#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "readers/ncu/csv_records.hpp"
#include "readers/ncu/ncu_report.hpp"
#include "readers/ncu/ncu_values.hpp"
#include "readers/ncu/text_input.hpp"

namespace kernscope::readers::ncu {
namespace {

using Record = std::vector<std::string>;

struct Columns {
  std::unordered_map<std::string, std::size_t> index;
  std::optional<std::size_t> operator[](const std::string& name) const {
    const auto it = index.find(name);
    return it == index.end() ? std::nullopt : std::optional<std::size_t>(it->second);
  }
};

Columns columns_of(const Record& header) {
  Columns c;
  for (std::size_t i = 0; i < header.size(); ++i) c.index.emplace(header[i], i);
  return c;
}

std::string cell(const Record& r, std::optional<std::size_t> i) { return i && *i < r.size() ? r[*i] : std::string(); }

std::int64_t integer_cell(const Record& r, std::optional<std::size_t> i) {
  const auto v = parse_ncu_number(cell(r, i));
  return v ? static_cast<std::int64_t>(*v) : 0;
}

// The columns that describe the launch rather than measure it (ncu 2025.3, and older versions'
// "Kernel Time"); NVTX context columns hold ':' in their names.
bool is_fixed_column(const std::string& name) {
  static const std::vector<std::string> kFixed = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name",
                                                  "Kernel Time", "Context", "Stream", "Block Size", "Grid Size",
                                                  "Device", "CC", "Section Name", "Body Item Label", "Metric Name",
                                                  "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
                                                  "Rule Description", "Estimated Speedup Type", "Estimated Speedup"};
  return std::ranges::find(kFixed, name) != kFixed.end() || name.find(':') != std::string::npos;
}

// The launch columns both layouts share.
NcuKernel kernel_of(const Record& r, const Columns& c) {
  NcuKernel k;
  k.id = integer_cell(r, c["ID"]);
  k.process_id = integer_cell(r, c["Process ID"]);
  k.process_name = cell(r, c["Process Name"]);
  k.context = integer_cell(r, c["Context"]);
  k.stream = integer_cell(r, c["Stream"]);
  k.device = integer_cell(r, c["Device"]);
  k.name = cell(r, c["Kernel Name"]);
  k.compute_capability = cell(r, c["CC"]);
  k.grid = parse_dim3(cell(r, c["Grid Size"]));
  k.block = parse_dim3(cell(r, c["Block Size"]));
  return k;
}

void finish(NcuReport& report) {
  std::ranges::stable_sort(report.kernels, [](const NcuKernel& a, const NcuKernel& b) { return a.id < b.id; });
  std::unordered_map<std::string, std::int64_t> seen;
  for (auto& k : report.kernels) {
    derive_kernel_fields(k);
    k.invocation = seen[k.name]++;
  }
}

Result<void> check_width(const Record& r, std::size_t header_size, std::size_t record_number, const std::string& source) {
  if (r.size() > header_size) {
    return make_error(ErrorCode::kBadInput, source + ": CSV record " + std::to_string(record_number) + " has " +
                                                std::to_string(r.size()) + " fields, the header " +
                                                std::to_string(header_size));
  }
  return {};
}

Result<NcuReport> read_raw(const std::vector<Record>& records, const std::string& source) {
  const Record& header = records[0];
  const Columns c = columns_of(header);
  std::vector<std::size_t> metric_columns;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (!is_fixed_column(header[i]) && header[i].find("__") != std::string::npos) metric_columns.push_back(i);
  }
  if (metric_columns.empty()) {
    return make_error(ErrorCode::kBadInput, source + ": an ncu CSV without metric columns (expected ncu --csv --page raw or --page details)");
  }
  std::size_t first = 1;
  Record units(header.size());
  // The units row: no ID, units under the metric columns.
  if (records.size() > 1 && cell(records[1], c["ID"]).empty()) {
    units = records[1];
    units.resize(header.size());
    first = 2;
  }
  NcuReport report;
  report.page = NcuPage::kRaw;
  for (std::size_t n = first; n < records.size(); ++n) {
    const Record& r = records[n];
    if (auto ok = check_width(r, header.size(), n + 1, source); !ok) return std::unexpected(ok.error());
    if (!parse_ncu_number(cell(r, c["ID"]))) {
      return make_error(ErrorCode::kBadInput, source + ": CSV record " + std::to_string(n + 1) + " has no kernel ID");
    }
    NcuKernel k = kernel_of(r, c);
    for (const std::size_t i : metric_columns) {
      if (i >= r.size()) continue;
      const auto value = parse_ncu_number(r[i]);
      if (!value) {
        // Text attributes (the device's name, PolicySpread); n/a and empty cells say nothing.
        if (!r[i].empty() && r[i] != "n/a" && r[i] != "N/A") k.text_values[header[i]] = r[i];
        continue;
      }
      const BaseValue base = to_base_unit(*value, units[i]);
      k.metrics[header[i]] = NcuMetric{base.value, base.unit};
    }
    report.kernels.push_back(std::move(k));
  }
  return report;
}

// Labels of ncu's sections as the metric each shows (ncu 2025.3's section files; older labels too).
std::string metric_of_label(const std::string& section, const std::string& label) {
  static const std::vector<std::tuple<std::string, std::string, std::string>> kLabels = {
      {"GPU Speed Of Light Throughput", "Duration", "gpu__time_duration.sum"},
      {"GPU Speed Of Light Throughput", "DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
      {"GPU Speed Of Light Throughput", "Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
      {"GPU Speed Of Light Throughput", "Memory [%]", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
      {"GPU Speed Of Light Throughput", "L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"},
      {"GPU Speed Of Light Throughput", "L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"},
      {"GPU Speed Of Light Throughput", "Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
      {"GPU Speed Of Light Throughput", "Compute (SM) [%]", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
      {"GPU Speed Of Light Throughput", "SM Frequency", "gpc__cycles_elapsed.avg.per_second"},
      {"GPU Speed Of Light Throughput", "DRAM Frequency", "dram__cycles_elapsed.avg.per_second"},
      {"GPU Speed Of Light Throughput", "Elapsed Cycles", "gpc__cycles_elapsed.max"},
      {"GPU Speed Of Light Throughput", "SM Active Cycles", "sm__cycles_active.avg"},
      {"Occupancy", "Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"},
      {"Occupancy", "Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct"},
      {"Memory Workload Analysis", "Memory Throughput", "dram__bytes.sum.per_second"},
      {"Memory Workload Analysis", "L2 Hit Rate", "lts__t_sector_hit_rate.pct"},
      {"Memory Workload Analysis", "L1/TEX Hit Rate", "l1tex__t_sector_hit_rate.pct"},
  };
  for (const auto& [s, l, metric] : kLabels) {
    if (s == section && l == label) return metric;
  }
  return {};
}

// "Duration (gpu__time_duration.sum)" (--print-metric-name label-name) or a metric name itself.
std::string metric_name_in(const std::string& label) {
  if (label.ends_with(")")) {
    const std::size_t open = label.rfind('(');
    if (open != std::string::npos) {
      const std::string inner = label.substr(open + 1, label.size() - open - 2);
      if (inner.find("__") != std::string::npos && inner.find(' ') == std::string::npos) return inner;
    }
  }
  if (label.find("__") != std::string::npos && label.find(' ') == std::string::npos) return label;
  return {};
}

std::string label_without_name(const std::string& label) {
  const std::size_t open = label.rfind(" (");
  return open != std::string::npos && !metric_name_in(label).empty() ? label.substr(0, open) : label;
}

Result<NcuReport> read_details(const std::vector<Record>& records, const std::string& source) {
  const Record& header = records[0];
  const Columns c = columns_of(header);
  NcuReport report;
  report.page = NcuPage::kDetails;
  std::map<std::int64_t, std::size_t> by_id;
  for (std::size_t n = 1; n < records.size(); ++n) {
    const Record& r = records[n];
    if (auto ok = check_width(r, header.size(), n + 1, source); !ok) return std::unexpected(ok.error());
    const auto id = parse_ncu_number(cell(r, c["ID"]));
    if (!id) return make_error(ErrorCode::kBadInput, source + ": CSV record " + std::to_string(n + 1) + " has no kernel ID");
    auto [it, fresh] = by_id.emplace(static_cast<std::int64_t>(*id), report.kernels.size());
    if (fresh) report.kernels.push_back(kernel_of(r, c));
    NcuKernel& k = report.kernels[it->second];
    const std::string section = cell(r, c["Section Name"]);
    const std::string rule = cell(r, c["Rule Name"]);
    if (!rule.empty()) {
      RuleResult result{section, rule, cell(r, c["Rule Type"]), cell(r, c["Rule Description"]),
                        cell(r, c["Estimated Speedup Type"]), parse_ncu_number(cell(r, c["Estimated Speedup"]))};
      k.rules.push_back(std::move(result));
      continue;
    }
    const std::string label = cell(r, c["Metric Name"]);
    const auto value = parse_ncu_number(cell(r, c["Metric Value"]));
    if (label.empty() || !value) continue;
    std::string key = metric_name_in(label);
    if (key.empty()) key = metric_of_label(section, label_without_name(label));
    if (key.empty()) key = section + "/" + label;
    const BaseValue base = to_base_unit(*value, cell(r, c["Metric Unit"]));
    k.metrics[key] = NcuMetric{base.value, base.unit};
  }
  return report;
}

}  // namespace

Result<NcuReport> parse_ncu_csv(std::string_view text, const std::string& source) {
  CsvText csv = split_ncu_csv(text);
  if (csv.records.empty()) {
    for (const auto& m : csv.messages) {
      if (m.find("No kernels were profiled") != std::string::npos || m.starts_with("==ERROR==")) {
        return make_error(ErrorCode::kBadInput, source + ": no profiled kernels in this ncu output (ncu said: " + m + ")");
      }
    }
    return make_error(ErrorCode::kBadInput, source + ": not an Nsight Compute CSV (ncu --csv --page raw or --page details): "
                                                     "no header line starting with \"ID\"");
  }
  const Record& header = csv.records[0];
  const Columns c = columns_of(header);
  if (!c["Kernel Name"]) {
    return make_error(ErrorCode::kBadInput, source + ": an ncu CSV without a \"Kernel Name\" column (expected --page raw or --page details)");
  }
  Result<NcuReport> report;
  if (c["Metric Name"] && c["Metric Value"]) {
    report = read_details(csv.records, source);
  } else if (c["Metric Name"]) {
    return make_error(ErrorCode::kBadInput, source + ": an ncu CSV of another layout (a \"Metric Name\" column without "
                                                     "\"Metric Value\": --print-summary?); export --page raw or --page details per kernel");
  } else {
    report = read_raw(csv.records, source);
  }
  if (!report) return report;
  if (report->kernels.empty()) return make_error(ErrorCode::kBadInput, source + ": an ncu CSV with a header but no kernel rows");
  report->source = source;
  report->messages = std::move(csv.messages);
  finish(*report);
  return report;
}

Result<NcuReport> read_ncu_csv(const std::string& path) {
  auto text = read_text_input(path);
  if (!text) return std::unexpected(text.error());
  return parse_ncu_csv(*text, path);
}

}  // namespace kernscope::readers::ncu
