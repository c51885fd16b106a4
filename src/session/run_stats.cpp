// stats: the reports of `nsys stats`, with the same rows, numbers and order.
#include "kernscope/reports.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace stats_runner {
namespace {

// nsys stats' default report set, less the APIs kernscope does not model (OpenMP, Vulkan...).
const std::vector<std::string> kDefaultReports = {"nvtx_sum", "osrt_sum", "cuda_api_sum",
                                                  "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                                                  "cuda_gpu_mem_size_sum"};

Result<std::vector<ReportRequest>> requests_of(const Options& o) {
  std::vector<ReportRequest> requests;
  auto names = o.list("report");
  for (const auto& name : names.empty() ? kDefaultReports : names) {
    auto request = parse_report(name);
    if (!request) return std::unexpected(request.error());
    requests.push_back(std::move(*request));
  }
  return requests;
}

Result<OpenOptions> plan(const Options& o) {
  auto requests = requests_of(o);
  if (!requests) return std::unexpected(requests.error());
  OpenOptions open;
  open.kinds = open.detail_kinds = 0;
  open.thread_cpu = false;  // nsys's reports never read it
  for (const auto& r : *requests) {
    open.kinds |= report_needs(r);
    open.detail_kinds |= report_details(r);
  }
  return open;
}

// A report's file under --output PREFIX, less the format's extension (the writer adds it).
std::string output_path(const std::string& prefix, const ReportRequest& r) {
  std::string name = r.name;
  if (r.kernel_names == KernelNameVariant::kBase) name += "_base";
  if (r.kernel_names == KernelNameVariant::kMangled) name += "_mangled";
  return prefix + "_" + name;
}

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto requests = requests_of(o);
  if (!requests) return std::unexpected(requests.error());
  constexpr EventKinds kCuda = bit(EventKind::kKernels) | bit(EventKind::kMemcpy) | bit(EventKind::kMemset) |
                               bit(EventKind::kApiCalls) | bit(EventKind::kOsrt);
  if ((trace.present & kCuda) == 0) {
    return make_error(ErrorCode::kNoData, trace.source.path + ": the export contains no CUDA data (no kernels, memory "
                                                              "operations or CUDA API calls were traced)");
  }
  const std::string prefix = o.text("output");
  Document d;
  d.nsys_reports = true;
  for (const auto& request : *requests) {
    auto table = run_report(trace, request);
    if (!table) {
      if (table.error().code != ErrorCode::kNoData) return std::unexpected(table.error());
      d.messages.push_back("SKIPPED " + request.spelled + ": " + table.error().message);
      continue;
    }
    if (table->rows.empty()) d.messages.push_back(request.spelled + ": no data in the selection");
    if (!prefix.empty() && prefix != "-") d.table_files.push_back(output_path(prefix, request));
    d.tables.push_back(std::move(*table));
  }
  return d;
}

}  // namespace
}  // namespace stats_runner

namespace stats_runner {
std::string reports_listing() {
  std::string text = "The reports of kernscope stats (-r REPORT[:base|:mangled], repeatable), as nsys stats names them:\n\n";
  for (const auto& [name, title] : report_titles()) {
    text += "  " + name + std::string(name.size() < 24 ? 24 - name.size() : 1, ' ') + title + "\n";
  }
  return text + "\nWithout -r: nvtx_sum, osrt_sum, cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum.\n";
}
}  // namespace stats_runner

const AnalysisEntry& stats_entry() {
  using namespace stats_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "stats",
          .summary = "Reports equal to `nsys stats` (same rows, numbers and order)",
          .options = {{"report", 'r', OptionKind::kList, "",
                       "Report to run, repeatable; REPORT[:base|:mangled] (default: nvtx_sum, osrt_sum, cuda_api_sum, "
                       "cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum)"},
                      {"output", 'o', OptionKind::kText, "", "Write each report to PREFIX_<report>.<ext> ('-': stdout)"}},
          .formats = table_formats_and({"column"}),
          .time_unit = true,
          .filters = true,
          .shape = ResultShape::kTables,
          .trace_help = "Nsight Systems export (.sqlite, .nsys-rep; .sqlite.gz, .sqlite.xz) or PyTorch-profiler JSON (.json, .json.gz, .json.xz)",
          .listings = {{"help-reports", reports_listing()}}},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
