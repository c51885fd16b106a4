// The nsys-compatible statistics reports (`kernscope stats`). Each report reproduces the rows,
// numbers, rounding and order of the `nsys stats` report of the same name (nsys 2025.3).
#pragma once

#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

enum class KernelNameVariant { kDemangled, kBase, kMangled };

struct ReportRequest {
  std::string name;  // e.g. "cuda_gpu_kern_sum"
  KernelNameVariant kernel_names = KernelNameVariant::kDemangled;
  std::string spelled;  // as the user wrote it, e.g. "cuda_gpu_kern_sum:base"
};

// Parses "REPORT[:base|:mangled]". Errors name the known reports.
Result<ReportRequest> parse_report(const std::string& text);
std::vector<std::string> report_names();
// (name, title) of every report, in report_names()'s order: what `stats --help-reports` lists.
std::vector<std::pair<std::string, std::string>> report_titles();
// The event kinds a report reads, and those of which it reads every column (OpenOptions).
EventKinds report_needs(const ReportRequest& request);
EventKinds report_details(const ReportRequest& request);
// Runs a report. kNoData when the trace lacks what it needs (the report is skipped).
Result<Table> run_report(const Trace& trace, const ReportRequest& request);

}  // namespace kernscope
