// kernscope stats: the reports of `nsys stats`, with the same numbers.
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/reports.hpp"
#include "kernscope/trace_filter.hpp"

namespace kernscope::cli {
namespace {

struct StatsOptions {
  std::vector<std::string> reports;
  std::string format = "table";
  std::string output;
  std::string time_unit = "ns";
  std::string filter_time;
  std::string filter_nvtx;
  std::string trace;
};

// nsys stats' default report set, less the APIs kernscope does not model (OpenMP, Vulkan...).
const std::vector<std::string> kDefaultReports = {"nvtx_sum", "osrt_sum", "cuda_api_sum",
                                                  "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                                                  "cuda_gpu_mem_size_sum"};

std::string output_path(const StatsOptions& o, const ReportRequest& r, Format format) {
  std::string name = r.name;
  if (r.kernel_names == KernelNameVariant::kBase) name += "_base";
  if (r.kernel_names == KernelNameVariant::kMangled) name += "_mangled";
  return o.output + "_" + name + "." + format_extension(format);
}

int run_stats(const StatsOptions& o) {
  std::vector<ReportRequest> requests;
  EventKinds needs = 0, details = 0;
  for (const auto& name : o.reports.empty() ? kDefaultReports : o.reports) {
    auto request = parse_report(name);
    if (!request) return fail(request.error());
    needs |= report_needs(*request);
    details |= report_details(*request);
    requests.push_back(std::move(*request));
  }
  auto format = parse_format(o.format);
  if (!format) return fail(format.error());
  auto unit = parse_time_unit(o.time_unit);
  if (!unit) return fail(unit.error());
  FilterSpec spec;
  if (!o.filter_time.empty()) {
    auto window = parse_time_window(o.filter_time);
    if (!window) return fail(window.error());
    spec.time = *window;
  }
  if (!o.filter_nvtx.empty()) {
    spec.nvtx = o.filter_nvtx;
    needs |= bit(EventKind::kNvtx);
  }

  OpenOptions open_options;
  open_options.kinds = needs;
  open_options.detail_kinds = details;
  auto trace = open_trace(o.trace, open_options);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  constexpr EventKinds kCuda = bit(EventKind::kKernels) | bit(EventKind::kMemcpy) |
                               bit(EventKind::kMemset) | bit(EventKind::kApiCalls);
  if ((loaded.present & kCuda) == 0) {
    return fail(Error{ErrorCode::kNoData, o.trace + ": the export contains no CUDA data (no kernels, memory "
                                                    "operations or CUDA API calls were traced)"});
  }
  if (!spec.empty()) {
    auto filter = resolve_filter(loaded, spec);
    if (!filter) return fail(filter.error());
    apply_filter(loaded, *filter);
  }

  const RenderOptions render_options{*format, *unit};
  bool first = true;
  for (const auto& request : requests) {
    auto table = run_report(loaded, request);
    if (!table) {
      if (table.error().code != ErrorCode::kNoData) return fail(table.error());
      std::cerr << "kernscope: SKIPPED " << request.spelled << ": " << table.error().message << '\n';
      continue;
    }
    if (table->rows.empty()) std::cerr << "kernscope: " << request.spelled << ": no data in the selection\n";
    if (!o.output.empty() && o.output != "-") {
      const std::string path = output_path(o, request, *format);
      std::ofstream file(path, std::ios::binary | std::ios::trunc);
      if (!file) return fail(Error{ErrorCode::kIo, "cannot write " + path});
      render(file, *table, render_options);
      file.close();
      if (!file) return fail(Error{ErrorCode::kIo, "cannot write " + path});
      std::cerr << "kernscope: wrote " << path << '\n';
      continue;
    }
    if (!first && *format != Format::kTable && !table->rows.empty()) std::cout << '\n';
    render(std::cout, *table, render_options);
    if (!table->rows.empty()) first = false;
  }
  std::cout.flush();
  if (!std::cout) return fail(Error{ErrorCode::kIo, "cannot write to standard output"});
  return 0;
}

}  // namespace

Command add_stats(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand("stats", "Reports equal to `nsys stats` (same rows, numbers and order)");
  cmd->add_option("-r,--report", options->reports,
                  "Report to run, repeatable; REPORT[:base|:mangled] (default: nvtx_sum, osrt_sum, "
                  "cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum)");
  cmd->add_option("-f,--format", options->format, "table, csv, tsv or json")->capture_default_str();
  cmd->add_option("-o,--output", options->output, "Write each report to PREFIX_<report>.<ext> ('-': stdout)");
  cmd->add_option("--timeunit", options->time_unit, "ns, us, ms or s")->capture_default_str();
  cmd->add_option("--filter-time", options->filter_time,
                  "[START]/[END] with units ns us ms s m h (e.g. 1s2ms/3s): keep events overlapping it");
  cmd->add_option("--filter-nvtx", options->filter_nvtx,
                  "RANGE[@DOMAIN][/INDEX]: keep events overlapping that NVTX range instance");
  cmd->add_option("trace", options->trace, "Nsight Systems export (.sqlite, .sqlite.gz, .nsys-rep)")->required();
  return [options] { return run_stats(*options); };
}

}  // namespace kernscope::cli
