// In-process benchmarks (Google Benchmark) of the stats path on a real export:
// open + the four summaries, each report alone on a loaded trace, and the time filter.
//   bench_stats --benchmark_repetitions=5   (export: $KERNSCOPE_BENCH_TRACE, default the llama fixture)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <sstream>

#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/reports.hpp"
#include "model/trace_filter.hpp"

namespace {

using namespace kernscope;

std::string trace_path() {
  const char* env = std::getenv("KERNSCOPE_BENCH_TRACE");
  return env ? env : KERNSCOPE_DEFAULT_BENCH_TRACE;
}

const std::vector<std::string> kFour = {"cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "nvtx_sum"};

OpenOptions options_for(const std::vector<std::string>& reports) {
  OpenOptions o;
  o.kinds = 0;
  o.detail_kinds = 0;
  for (const auto& r : reports) {
    auto req = parse_report(r).value();
    o.kinds |= report_needs(req);
    o.detail_kinds |= report_details(req);
  }
  return o;
}

// Argument: rows per parallel slice (0: each table scanned whole, still one thread per table).
void BM_OpenAndFourSummaries(benchmark::State& state) {
  auto options = options_for(kFour);
  options.rows_per_slice = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    auto trace = open_trace(trace_path(), options);
    if (!trace) state.SkipWithError(trace.error().message.c_str());
    std::ostringstream out;
    for (const auto& r : kFour) {
      auto table = run_report(*trace, parse_report(r).value());
      if (table) render(out, *table, RenderOptions{Format::kCsv, TimeUnit::kNs});
    }
    benchmark::DoNotOptimize(out.str().size());
  }
}
BENCHMARK(BM_OpenAndFourSummaries)->Arg(0)->Arg(10'000)->Arg(20'000)->Arg(50'000)->Arg(100'000)
    ->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Report(benchmark::State& state, const std::string& name) {
  static auto trace = open_trace(trace_path());
  if (!trace) {
    state.SkipWithError(trace.error().message.c_str());
    return;
  }
  const auto request = parse_report(name).value();
  for (auto _ : state) {
    auto table = run_report(*trace, request);
    benchmark::DoNotOptimize(table);
  }
}
BENCHMARK_CAPTURE(BM_Report, kern_sum, std::string("cuda_gpu_kern_sum"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, api_sum, std::string("cuda_api_sum"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, kern_exec_sum, std::string("cuda_kern_exec_sum"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, nvtx_kern_sum, std::string("nvtx_kern_sum"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, nvtx_gpu_proj_sum, std::string("nvtx_gpu_proj_sum"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, gpu_trace, std::string("cuda_gpu_trace"))->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
