// Pieces shared by the nsys-compatible reports: names as nsys prints them, the standard summary
// columns, and grouping of samples by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyses/sample_stats.hpp"
#include "kernscope/reports.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::report {

// nsys drops a trailing version tag from API names: "cudaGetDeviceProperties_v12000" ->
// "cudaGetDeviceProperties" (SQL: CASE substr(name, -6, 2) WHEN '_v' ...).
std::string_view api_display_name(std::string_view name);

// The kernel name column for a variant, with nsys's fallback to the demangled name.
StringId kernel_name(const Trace& trace, RowIndex row, KernelNameVariant variant);

// "[CUDA memcpy Host-to-Device]"; empty when the copy kind has no label (nsys's join drops it).
std::string memcpy_name(const Trace& trace, std::int32_t copy_kind);
inline constexpr std::string_view kMemsetName = "[CUDA memset]";

// round(x, 1) as nsys's SQL applies it.
Cell round1(double value);
// round(total * 100.0 / grand_total, 1); NULL when the grand total is 0.
Cell percent_of(std::int64_t total, std::int64_t grand_total);

// Time (%), Total Time, <count_label>, Avg, Med, Min, Max, StdDev: the columns of every nsys
// *_sum report, followed by the report's own trailing columns.
std::vector<Column> summary_columns(std::string_view count_label);
void append_summary_cells(std::vector<Cell>& row, const SampleStats& stats, std::int64_t grand_total);

Error no_data(const Trace& trace, std::string_view what);

}  // namespace kernscope::report
