// The table of nsys-compatible reports: name, what it reads, how it runs.
#include <array>

#include "analyses/nsys/cuda_summaries.hpp"
#include "analyses/nsys/cuda_traces.hpp"
#include "analyses/nsys/nvtx_reports.hpp"
#include "kernscope/reports.hpp"

namespace kernscope {
namespace {

using Runner = Result<Table> (*)(const Trace&, const ReportRequest&);

struct ReportEntry {
  const char* name;
  const char* title;  // the title its table carries, as nsys prints it (stats --help-reports)
  EventKinds needs;
  bool kernel_name_variants;  // accepts :base and :mangled
  Runner run;
};

constexpr EventKinds kGpuOps = bit(EventKind::kKernels) | bit(EventKind::kMemcpy) | bit(EventKind::kMemset);

const std::array<ReportEntry, 15> kReports{{
    {"cuda_api_gpu_sum", "CUDA Summary (API/Kernels/MemOps)", kGpuOps | bit(EventKind::kApiCalls), true, report::cuda_api_gpu_sum},
    {"cuda_api_sum", "CUDA API Summary", bit(EventKind::kApiCalls), false, report::cuda_api_sum},
    {"cuda_api_trace", "CUDA API Trace", bit(EventKind::kApiCalls), false, report::cuda_api_trace},
    {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", bit(EventKind::kKernels), true, report::cuda_gpu_kern_sum},
    {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", bit(EventKind::kMemcpy) | bit(EventKind::kMemset), false, report::cuda_gpu_mem_size_sum},
    {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", bit(EventKind::kMemcpy) | bit(EventKind::kMemset), false, report::cuda_gpu_mem_time_sum},
    {"cuda_gpu_trace", "CUDA GPU Trace", kGpuOps, true, report::cuda_gpu_trace},
    {"cuda_kern_exec_sum", "CUDA Kernel Launch & Exec Time Summary", bit(EventKind::kKernels) | bit(EventKind::kApiCalls), true, report::cuda_kern_exec_sum},
    {"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary", kGpuOps | bit(EventKind::kApiCalls) | bit(EventKind::kNvtx), false, report::nvtx_gpu_proj_sum},
    {"nvtx_kern_sum", "NVTX Range Kernel Summary", bit(EventKind::kKernels) | bit(EventKind::kApiCalls) | bit(EventKind::kNvtx), true, report::nvtx_kern_sum},
    {"nvtx_pushpop_sum", "NVTX Push/Pop Range Summary", bit(EventKind::kNvtx), false, report::nvtx_pushpop_sum},
    {"nvtx_startend_sum", "NVTX Start/End Range Summary", bit(EventKind::kNvtx), false, report::nvtx_startend_sum},
    {"nvtx_sum", "NVTX Range Summary", bit(EventKind::kNvtx), false, report::nvtx_sum},
    {"osrt_sum", "OS Runtime Summary", bit(EventKind::kOsrt), false, report::osrt_sum},
    // Alias kept for users of older nsys versions, where this report was named gpukernsum.
    {"gpukernsum", "CUDA GPU Kernel Summary", bit(EventKind::kKernels), true, report::cuda_gpu_kern_sum},
}};

const ReportEntry* find_entry(const std::string& name) {
  for (const auto& e : kReports) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> report_names() {
  std::vector<std::string> names;
  for (const auto& e : kReports) {
    if (std::string_view(e.name) != "gpukernsum") names.emplace_back(e.name);
  }
  return names;
}

std::vector<std::pair<std::string, std::string>> report_titles() {
  std::vector<std::pair<std::string, std::string>> titles;
  for (const auto& e : kReports) {
    if (std::string_view(e.name) != "gpukernsum") titles.emplace_back(e.name, e.title);
  }
  return titles;
}

Result<ReportRequest> parse_report(const std::string& text) {
  ReportRequest request;
  request.spelled = text;
  const auto colon = text.find(':');
  request.name = text.substr(0, colon);
  const ReportEntry* entry = find_entry(request.name);
  if (!entry) {
    std::string known;
    for (const auto& n : report_names()) known += (known.empty() ? "" : ", ") + n;
    return make_error(ErrorCode::kInvalidArgument, "unknown report '" + text + "' (known: " + known + ")");
  }
  if (colon != std::string::npos) {
    std::string rest = text.substr(colon + 1);
    std::size_t pos = 0;
    while (pos <= rest.size()) {
      const auto next = rest.find(':', pos);
      const std::string option = rest.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
      if (entry->kernel_name_variants && option == "base") {
        request.kernel_names = KernelNameVariant::kBase;
      } else if (entry->kernel_name_variants && option == "mangled") {
        request.kernel_names = KernelNameVariant::kMangled;
      } else {
        return make_error(ErrorCode::kInvalidArgument,
                          "report '" + request.name + "' does not take the option '" + option + "'" +
                              (entry->kernel_name_variants ? " (options: base, mangled)" : ""));
      }
      if (next == std::string::npos) break;
      pos = next + 1;
    }
  }
  return request;
}

EventKinds report_details(const ReportRequest& request) {
  // Only the per-event traces print launch geometry, contexts, streams and return values.
  if (request.name == "cuda_gpu_trace") return kGpuOps;
  if (request.name == "cuda_api_trace") return bit(EventKind::kApiCalls);
  return 0;
}

EventKinds report_needs(const ReportRequest& request) {
  const ReportEntry* entry = find_entry(request.name);
  return entry ? entry->needs : 0;
}

Result<Table> run_report(const Trace& trace, const ReportRequest& request) {
  const ReportEntry* entry = find_entry(request.name);
  if (!entry) return make_error(ErrorCode::kInvalidArgument, "unknown report '" + request.name + "'");
  const EventKinds missing_detail = report_details(request) & trace.loaded & ~trace.detailed;
  if (missing_detail) {
    return make_error(ErrorCode::kInternal, "report '" + request.name +
                                                "' needs every column, but the trace was opened with "
                                                "summary columns only (OpenOptions::detail_kinds)");
  }
  auto table = entry->run(trace, request);
  if (table) table->report = request.name;
  return table;
}

}  // namespace kernscope
