#include "analyses/nsys/report_helpers.hpp"

#include "analyses/nsys/sql_numeric.hpp"

namespace kernscope::report {

std::string_view api_display_name(std::string_view name) {
  if (name.size() >= 6 && name.substr(name.size() - 6, 2) == "_v") return name.substr(0, name.size() - 6);
  return name;
}

StringId kernel_name(const Trace& trace, RowIndex row, KernelNameVariant variant) {
  const auto& k = trace.kernels;
  StringId id = k.demangled_name[row];
  // A plan without name variants (OpenOptions::kernel_name_variants) leaves those columns empty.
  if (variant == KernelNameVariant::kBase && row < k.short_name.size() && k.short_name[row] != kNoString) id = k.short_name[row];
  if (variant == KernelNameVariant::kMangled && trace.has_mangled_names && row < k.mangled_name.size() &&
      k.mangled_name[row] != kNoString) {
    id = k.mangled_name[row];
  }
  return id;
}

std::string memcpy_name(const Trace& trace, std::int32_t copy_kind) {
  auto it = trace.memcpy_kind_labels.find(copy_kind);
  if (it == trace.memcpy_kind_labels.end()) return {};
  return "[CUDA memcpy " + it->second + "]";
}

Cell round1(double value) { return sqlite_round(value, 1); }

Cell percent_of(std::int64_t total, std::int64_t grand_total) {
  if (grand_total == 0) return std::monostate{};
  return sqlite_round(static_cast<double>(total) * 100.0 / static_cast<double>(grand_total), 1);
}

std::vector<Column> summary_columns(std::string_view count_label) {
  return {{"Time", Unit::kPercent},        {"Total Time", Unit::kDuration},
          {std::string(count_label)},      {"Avg", Unit::kDuration},
          {"Med", Unit::kDuration},        {"Min", Unit::kDuration},
          {"Max", Unit::kDuration},        {"StdDev", Unit::kDuration}};
}

void append_summary_cells(std::vector<Cell>& row, const SampleStats& stats, std::int64_t grand_total) {
  row.push_back(percent_of(stats.sum, grand_total));
  row.push_back(stats.sum);
  row.push_back(stats.count);
  row.push_back(round1(stats.mean));
  row.push_back(round1(stats.median));
  row.push_back(stats.min);
  row.push_back(stats.max);
  row.push_back(round1(stats.stdev));
}

Error no_data(const Trace& trace, std::string_view what) {
  return Error{ErrorCode::kNoData, trace.source.path + " does not contain " + std::string(what) + "."};
}

}  // namespace kernscope::report
