// The tracer's cost (issue 18) without a GPU: its own timing (SelfCost), the rows the writer puts in
// KERNSCOPE_TRACER_COST read back, a process with nothing recorded leaving no file, the list of
// processes `record` reads, and the estimate `info`/`report`/`steps` state, on synthetic traces whose
// launch counts and step times are set here, so every figure below is worked out by hand.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "analyses/steps/tracer_cost.hpp"
#include "render/tracer_cost_render.hpp"
#include "kernscope/analysis.hpp"
#include "kernscope/open.hpp"
#include "tracer/config/file_list.hpp"
#include "tracer/self_cost.hpp"
#include "tracer/trace_db_writer.hpp"

namespace kernscope::tracer {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kernscope-cost-" + std::to_string(getpid()) + "-" + name)).string();
}

TEST(TracerSelfCost, CountsPerThreadAndSite) {
  SelfCost cost;
  cost.add(CostSite::kBufferRequest, 100);
  cost.add(CostSite::kBufferRequest, 50);
  cost.add(CostSite::kInit, 7);
  std::uint32_t other_tid = 0;
  std::thread other([&] {
    other_tid = static_cast<std::uint32_t>(gettid());
    cost.add(CostSite::kBufferComplete, 30);
  });
  other.join();
  const auto rows = cost.rows();
  const auto me = static_cast<std::uint32_t>(gettid());
  std::map<std::pair<std::uint32_t, CostSite>, std::pair<std::int64_t, std::int64_t>> got;
  for (const auto& r : rows) got[{r.tid, r.site}] = {r.calls, r.total_ns};
  EXPECT_EQ(rows.size(), 3u);
  EXPECT_EQ((got[{me, CostSite::kBufferRequest}]), (std::pair<std::int64_t, std::int64_t>{2, 150}));
  EXPECT_EQ((got[{me, CostSite::kInit}]), (std::pair<std::int64_t, std::int64_t>{1, 7}));
  EXPECT_EQ((got[{other_tid, CostSite::kBufferComplete}]), (std::pair<std::int64_t, std::int64_t>{1, 30}));
  // A second SelfCost on the same thread counts apart from the first.
  SelfCost second;
  second.add(CostSite::kFinish, 5);
  EXPECT_EQ(second.rows().size(), 1u);
  EXPECT_EQ(cost.rows().size(), 3u);
}

TEST(TracerSelfCost, ScopedTimingMeasuresTheScopeAndIsCheap) {
  SelfCost cost;
  {
    ScopedCost timed(&cost, CostSite::kNvtxCallback);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto rows = cost.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GE(rows[0].total_ns, 2'000'000);
  // Two vDSO clock reads and two relaxed adds: far under a microsecond (a loaded 2-core VM
  // measured 40-60 ns).
  const double timing = SelfCost::timing_cost_ns(201);
  EXPECT_GT(timing, 0);
  EXPECT_LT(timing, 5000);
}

TEST(TracerCostRows, WrittenByTheWriterAndReadBack) {
  const std::string path = temp_path("rows.sqlite");
  auto writer = TraceDbWriter::create(path, 4242);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  StringPool strings;
  std::vector<SelfCostRow> rows = {{4242, CostSite::kInit, 1, 250'000'000},
                                   {4242, CostSite::kBufferRequest, 40, 120'000},
                                   {4250, CostSite::kBufferComplete, 39, 80'000},
                                   {4243, CostSite::kNvtxCallback, 1000, 300'000}};
  ASSERT_TRUE((*writer)->write_cost(rows, {4242, 4243}).has_value());
  ASSERT_TRUE((*writer)->finish({{"tracer", "kernscope test"}, {"timing_cost_ns", "45"}}, "app", {}, strings).has_value());
  writer->reset();
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  ASSERT_EQ(trace->tracer_cost.size(), 4u);
  const auto& c = trace->tracer_cost;
  EXPECT_EQ(c[0].global_tid, (std::int64_t{4242} << 24) | 4242);
  EXPECT_EQ(c[0].site, "init");
  EXPECT_EQ(c[0].calls, 1);
  EXPECT_EQ(c[0].total_ns, 250'000'000);
  EXPECT_TRUE(c[0].program_thread);
  EXPECT_EQ(c[2].site, "buffer_complete");
  EXPECT_FALSE(c[2].program_thread);  // CUPTI's thread
  EXPECT_EQ(c[3].site, "nvtx_callback");
  EXPECT_TRUE(c[3].program_thread);
  // The estimate's measured part: program threads 1 + 40 + 1000 calls, 250 + 0.12 + 0.3 ms.
  const auto e = estimate_tracer_cost(*trace, nullptr, {});
  EXPECT_EQ(e.program_calls, 1041);
  EXPECT_EQ(e.program_ns, 250'420'000);
  EXPECT_EQ(e.other_calls, 39);
  EXPECT_EQ(e.timing_cost_ns, 45);
  std::filesystem::remove(path);
}

TEST(TracerEmptyTrace, DiscardRemovesTheFileAndItsSidecars) {
  const std::string path = temp_path("empty.sqlite");
  auto writer = TraceDbWriter::create(path, 4242);
  ASSERT_TRUE(writer.has_value());
  StringPool strings;
  RecordBatch devices_only;  // what a process that only initialized CUDA records
  DeviceRow device;
  device.name = "NVIDIA H100 80GB HBM3";
  devices_only.devices.push_back(device);
  ASSERT_TRUE((*writer)->append(devices_only, strings).has_value());
  ASSERT_TRUE(std::filesystem::exists(path));
  ASSERT_TRUE((*writer)->discard().has_value());
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) EXPECT_FALSE(std::filesystem::exists(path + suffix)) << suffix;
}

TEST(TracerFileList, ProcessesWithTheirLastState) {
  const std::string list = temp_path("list.txt");
  std::filesystem::remove(list);
  ASSERT_TRUE(append_to_file_list(list, "/out/run-10.sqlite"));
  ASSERT_TRUE(append_to_file_list(list, "/out/run-11.sqlite"));
  ASSERT_TRUE(append_to_file_list(list, "/out/run-12.sqlite"));
  ASSERT_TRUE(append_to_file_list(list, empty_line(11, "/out/run-11.sqlite", list_command({"torchrun", "--nproc_per_node", "1", "a\tb"}))));
  ASSERT_TRUE(append_to_file_list(list, finished_line(10, "/out/run-10.sqlite", "python3 serve.py")));
  ASSERT_TRUE(append_to_file_list(list, "#bogus\tline"));
  std::ifstream in(list);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto processes = parse_file_list(text);
  ASSERT_EQ(processes.size(), 3u);
  EXPECT_EQ(processes[0].path, "/out/run-10.sqlite");
  EXPECT_EQ(processes[0].state, ListedProcess::State::kFinished);
  EXPECT_EQ(processes[0].pid, 10);
  EXPECT_EQ(processes[0].command, "python3 serve.py");
  EXPECT_EQ(processes[1].state, ListedProcess::State::kEmpty);
  EXPECT_EQ(processes[1].pid, 11);
  EXPECT_EQ(processes[1].command, "torchrun --nproc_per_node 1 a b");  // the tab made a space
  EXPECT_EQ(processes[2].state, ListedProcess::State::kStarted);  // killed before its tracer finished
  EXPECT_EQ(processes[2].pid, 0);
  EXPECT_EQ(list_command({std::string(300, 'x')}).size(), 200u);
  // The Python hook writing GC ranges where the tracer removed the empty file: a file again.
  const auto rewritten = parse_file_list("/out/run-13.sqlite\n#empty\t13\t/out/run-13.sqlite\tpython3 w.py\n/out/run-13.sqlite\n");
  ASSERT_EQ(rewritten.size(), 1u);
  EXPECT_EQ(rewritten[0].state, ListedProcess::State::kStarted);
  EXPECT_EQ(rewritten[0].pid, 13);
  EXPECT_EQ(rewritten[0].command, "python3 w.py");
  std::filesystem::remove(list);
}

// --- the estimate ---------------------------------------------------------------------------------

constexpr const char* kCalibration =
    "# test calibration\n"
    "gpu\thost\tcupti\tkinds\tus_per_launch\tsource\n"
    "NVIDIA H100 80GB HBM3\ttest host\t13*\tdefaults\t10.5\ttest row\n"
    "NVIDIA H100 80GB HBM3\ttest host\t13*\tkernel\t5\ttest row\n";

// A kernscope tracer trace with `steps` NVTX ranges "decode_step", each `wall_ns` long holding
// `launches` cudaLaunchKernel calls, each launching a 1 us kernel.
std::string synthetic_trace(const std::string& name, const std::string& gpu, int steps, std::int64_t wall_ns, int launches,
                            const std::string& recorded = "kernel,memcpy,memset,runtime,driver,nvtx,overhead api:default") {
  const std::string path = temp_path(name);
  auto writer = TraceDbWriter::create(path, 4242);
  EXPECT_TRUE(writer.has_value());
  StringPool strings;
  RecordBatch b;
  DeviceRow device;
  device.name = gpu;
  device.sm_count = 132;
  b.devices.push_back(device);
  const StringId launch = strings.intern("cudaLaunchKernel_v7000");
  const StringId step_name = strings.intern("decode_step");
  const StringId kernel_name = strings.intern("k");
  std::uint32_t correlation = 1;
  const std::int64_t t0 = 1'000'000'000;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t start = t0 + s * (wall_ns + 1000);
    NvtxRow range;
    range.start = start;
    range.end = start + wall_ns;
    range.pid = 4242;
    range.tid = 4242;
    range.end_tid = 4242;
    range.text = step_name;
    b.nvtx.push_back(range);
    const std::int64_t spacing = wall_ns / (launches + 1);
    for (int i = 0; i < launches; ++i, ++correlation) {
      ApiRow a;
      a.start = start + (i + 1) * spacing - 500;
      a.end = a.start + 400;
      a.pid = 4242;
      a.tid = 4242;
      a.correlation = correlation;
      a.name = launch;
      b.api_calls.push_back(a);
      KernelRow k;
      k.start = a.end + 100;
      k.end = k.start + 1000;
      k.correlation = correlation;
      k.demangled = k.short_name = k.mangled = kernel_name;
      b.kernels.push_back(k);
    }
  }
  EXPECT_TRUE((*writer)->append(b, strings).has_value());
  EXPECT_TRUE((*writer)->write_cost({{4242, CostSite::kBufferRequest, 10, 20'000}}, {4242}).has_value());
  EXPECT_TRUE((*writer)->finish({{"tracer", "kernscope test"}, {"recorded_kinds", recorded}, {"cupti_api_version", "130001"},
                                 {"host_cpu", "Test CPU, 16 CPUs"}, {"timing_cost_ns", "40"}},
                                "python3", {{4242, "python3"}}, strings)
                  .has_value());
  writer->reset();
  return path;
}

Result<StepAnalysis> steps_of(const Trace& trace) {
  return analyze_steps(trace, OpRuleSet::builtin(), StepOptions{});
}

TEST(TracerCostEstimate, LaunchesPerStepTimesTheCalibratedCost) {
  auto calibration = parse_tracer_cost_calibration(kCalibration);
  ASSERT_TRUE(calibration.has_value()) << calibration.error().message;
  // 8 steps of 20 ms with 700 launches each: 700 x 10.5 us = 7.35 ms of the 20 ms are the
  // tracer's, so untraced the step would take 12.65 ms: inflated by 7.35 / 12.65 = 58.1 %.
  const std::string path = synthetic_trace("estimate.sqlite", "NVIDIA H100 80GB HBM3", 8, 20'000'000, 700);
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  auto steps = steps_of(*trace);
  ASSERT_TRUE(steps.has_value());
  ASSERT_EQ(steps->steps.size(), 8u);
  const auto e = estimate_tracer_cost(*trace, &*steps, *calibration);
  ASSERT_TRUE(e.calibration.has_value()) << e.not_estimated;
  EXPECT_EQ(e.kinds, "defaults");
  EXPECT_DOUBLE_EQ(e.launches, 700);
  EXPECT_DOUBLE_EQ(e.host_ns, 20'000'000);
  EXPECT_NEAR(e.added_ns, 7'350'000, 1e-6);
  EXPECT_NEAR(e.inflation_percent, 100.0 * 7.35 / 12.65, 1e-9);
  EXPECT_EQ(e.total_launches, 5600);
  const auto lines = tracer_cost_sentences(e);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("traced host times inflated by about 58 % (700 launches per step x 10.5 us, calibrated on test host)", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find("20.000 ms traced, about 12.650 ms without the tracer"), std::string::npos) << lines[0];
  // Measured: 10 buffer requests, 20 us, over 5600 launches = 3.6 ns per launch.
  EXPECT_NE(lines[1].find("0.020 ms in 10 calls"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("3.6 ns per launch"), std::string::npos) << lines[1];

  // --record kernel: the kernel row's 5 us: 3.5 ms of 20, 3.5 / 16.5 = 21.2 %.
  const std::string kernel_path = synthetic_trace("kernel.sqlite", "NVIDIA H100 80GB HBM3", 8, 20'000'000, 700, "kernel api:default");
  auto kernel_trace = open_trace(kernel_path);
  ASSERT_TRUE(kernel_trace.has_value());
  auto kernel_steps = steps_of(*kernel_trace);
  ASSERT_TRUE(kernel_steps.has_value());
  const auto k = estimate_tracer_cost(*kernel_trace, &*kernel_steps, *calibration);
  ASSERT_TRUE(k.calibration.has_value()) << k.not_estimated;
  EXPECT_EQ(k.kinds, "kernel");
  EXPECT_NEAR(k.inflation_percent, 100.0 * 3.5 / 16.5, 1e-9);

  // Host times corrected: every step loses 7.35 ms (its GPU idled 19.3 ms: not capped).
  const auto corrected = correct_step_times(*steps, e);
  ASSERT_TRUE(corrected.sound) << corrected.why;
  ASSERT_EQ(corrected.corrected_ns.size(), 8u);
  for (auto ns : corrected.corrected_ns) EXPECT_EQ(ns, 12'650'000);
  EXPECT_EQ(corrected.capped, 0);
  std::filesystem::remove(path);
  std::filesystem::remove(kernel_path);
}

TEST(TracerCostEstimate, NoMatchingCalibrationSaysSoInsteadOfANumber) {
  auto calibration = parse_tracer_cost_calibration(kCalibration);
  ASSERT_TRUE(calibration.has_value());
  const std::string path = synthetic_trace("uncalibrated.sqlite", "NVIDIA B200", 4, 20'000'000, 700);
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value());
  auto steps = steps_of(*trace);
  ASSERT_TRUE(steps.has_value());
  const auto e = estimate_tracer_cost(*trace, &*steps, *calibration);
  EXPECT_FALSE(e.calibration.has_value());
  const auto lines = tracer_cost_sentences(e);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("tracer cost not estimated: no calibration for NVIDIA B200 with CUPTI 130001 recording defaults", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[0].find('%'), std::string::npos);  // no figure
  const auto corrected = correct_step_times(*steps, e);
  EXPECT_FALSE(corrected.sound);
  EXPECT_TRUE(corrected.corrected_ns.empty());
  // The same GPU with another CUPTI (a prefix that does not match) is not calibrated either.
  auto other = parse_tracer_cost_calibration("gpu\thost\tcupti\tkinds\tus_per_launch\tsource\nNVIDIA B200\th\t12*\tdefaults\t3\ts\n");
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(estimate_tracer_cost(*trace, &*steps, *other).calibration.has_value());
  std::filesystem::remove(path);
}

TEST(TracerCostEstimate, CorrectionIsCappedByTheGpuIdleTime) {
  TracerCostEstimate e;
  e.kernscope_trace = true;
  e.calibration = TracerCostCalibration{"g", "h", "13*", "defaults", "s", 10.0};
  StepAnalysis steps;
  Step host_bound;  // 100 launches x 10 us = 1 ms, GPU idle 5 ms: loses 1 ms
  host_bound.wall_ns = 8'000'000;
  host_bound.gpu_idle_ns = 5'000'000;
  host_bound.launches = 100;
  Step gpu_bound = host_bound;  // GPU idle 0.2 ms: loses only that
  gpu_bound.gpu_idle_ns = 200'000;
  steps.steps = {host_bound, gpu_bound};
  const auto c = correct_step_times(steps, e);
  ASSERT_TRUE(c.sound);
  EXPECT_EQ(c.corrected_ns, (std::vector<std::int64_t>{7'000'000, 7'800'000}));
  EXPECT_EQ(c.capped, 1);
  EXPECT_NE(c.why.find("1 of 2 steps capped"), std::string::npos) << c.why;
}

TEST(TracerCostEstimate, OlderTracesAndOtherSourcesGetNoFigure) {
  Trace nsys;
  nsys.source.format = "nsys-sqlite";
  EXPECT_TRUE(tracer_cost_sentences(estimate_tracer_cost(nsys, nullptr, builtin_tracer_cost_calibration())).empty());
  Trace old;
  old.source.format = "kernscope-tracer";
  const auto lines = tracer_cost_sentences(estimate_tracer_cost(old, nullptr, builtin_tracer_cost_calibration()));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("written by a tracer older than its cost measurement"), std::string::npos) << lines[0];
}

TEST(TracerCostCalibrationTable, BuiltInRowsParseAndBadRowsAreRefused) {
  const auto& rows = builtin_tracer_cost_calibration();
  ASSERT_GE(rows.size(), 2u);  // the figures measured whole-program before this session
  for (const auto& r : rows) {
    EXPECT_GT(r.us_per_launch, 0);
    EXPECT_FALSE(r.source.empty());
    EXPECT_FALSE(r.host.empty());
  }
  EXPECT_FALSE(parse_tracer_cost_calibration("gpu\thost\n").has_value());
  EXPECT_FALSE(parse_tracer_cost_calibration("gpu\thost\tcupti\tkinds\tus_per_launch\tsource\ng\th\t13\tdefaults\tfast\ts\n").has_value());
  EXPECT_FALSE(parse_tracer_cost_calibration("gpu\thost\tcupti\tkinds\tus_per_launch\tsource\ng\th\t13\tdefaults\t-1\ts\n").has_value());
  EXPECT_EQ(canonical_recorded_kinds("kernel,memcpy,memset,runtime,driver,nvtx,overhead api:default"), "defaults");
  // Every kind (the defaults before sync left them) is its own row, not the defaults.
  EXPECT_EQ(canonical_recorded_kinds("kernel,memcpy,memset,runtime,driver,sync,nvtx,overhead api:default"),
            "kernel,memcpy,memset,runtime,driver,sync,nvtx,overhead");
  EXPECT_EQ(canonical_recorded_kinds("kernel,memcpy,memset,runtime,driver,sync,nvtx,overhead api:all"),
            "kernel,memcpy,memset,runtime,driver,sync,nvtx,overhead api:all");
  EXPECT_EQ(canonical_recorded_kinds("kernel api:all"), "kernel");  // no API records to choose
}

TEST(TracerCostCommands, InfoReportAndStepsSayIt) {
  const std::string path = synthetic_trace("commands.sqlite", "NVIDIA B200 test", 4, 20'000'000, 700);
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value());
  auto steps = steps_of(*trace);
  ASSERT_TRUE(steps.has_value());
  const auto expected = tracer_cost_sentences(estimate_tracer_cost(*trace, &*steps, builtin_tracer_cost_calibration()));
  ASSERT_FALSE(expected.empty());
  for (const char* analysis : {"info", "report", "steps"}) {
    AnalysisRequest request;
    request.analysis = analysis;
    if (std::string(analysis) == "steps") request.options["correct-tracer-cost"] = {};
    auto out = run_analysis(path, request);
    ASSERT_TRUE(out.has_value()) << analysis << ": " << out.error().message;
    EXPECT_NE(out->text.find(expected[0]), std::string::npos) << analysis << ":\n" << out->text;
    if (std::string(analysis) == "steps") {
      EXPECT_NE(out->text.find("host times not corrected: no sound estimate"), std::string::npos) << out->text;
    }
    if (std::string(analysis) == "info") {
      // The trace was recorded with the default kinds (recorded_kinds has no sync): absent, not zero.
      EXPECT_NE(out->text.find("not recorded by kernscope record: sync ("), std::string::npos) << out->text;
    }
  }
  // JSON carries the figures, not only the sentences (issue 45 item 6): the same as the estimate.
  const auto estimate = estimate_tracer_cost(*trace, &*steps, builtin_tracer_cost_calibration());
  for (const char* analysis : {"info", "report"}) {
    AnalysisRequest request;
    request.analysis = analysis;
    request.format = "json";
    auto out = run_analysis(path, request);
    ASSERT_TRUE(out.has_value()) << analysis << ": " << out.error().message;
    const auto at = out->text.find("\"tracer_cost\":");
    ASSERT_NE(at, std::string::npos) << out->text;
    const std::string cost = out->text.substr(at, 2000);
    EXPECT_NE(cost.find("\"program_ns\": " + std::to_string(estimate.program_ns)), std::string::npos) << cost;
    EXPECT_NE(cost.find("\"program_calls\": " + std::to_string(estimate.program_calls)), std::string::npos) << cost;
    EXPECT_NE(cost.find("\"not_estimated_why\": \""), std::string::npos) << cost;
    EXPECT_NE(cost.find("\"" + expected[0].substr(0, 40)), std::string::npos) << cost;
  }
  // Every kind recorded: nothing said.
  const std::string every = synthetic_trace("every.sqlite", "NVIDIA B200 test", 4, 20'000'000, 700,
                                            "kernel,memcpy,memset,runtime,driver,sync,nvtx,overhead api:default");
  AnalysisRequest info;
  info.analysis = "info";
  auto out = run_analysis(every, info);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->text.find("not recorded by kernscope record"), std::string::npos) << out->text;
  std::filesystem::remove(every);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kernscope::tracer
