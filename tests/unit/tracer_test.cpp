// The tracer without a GPU: real CUPTI record structures, built in memory, go through the decoder
// and the SQLite writer, and kernscope's own nsys reader reads the file back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "kernscope/open.hpp"
#include "kernscope/reports.hpp"
#include "tracer/activity_decoder.hpp"
#include "tracer/buffer_pool.hpp"
#include "tracer/nvml_sampler.hpp"
#include "tracer/trace_db_writer.hpp"
#include "tracer/config/tracer_config.hpp"

namespace kernscope::tracer {
namespace {

std::string api_name(bool driver, std::uint32_t cbid) {
  if (driver) return cbid == 307 ? "cuLaunchKernel" : "cuDriverCall" + std::to_string(cbid);
  return cbid == 211 ? "cudaLaunchKernel_v7000" : cbid == 31 ? "cudaMemcpyAsync_v3020" : "cudaCall" + std::to_string(cbid);
}

CUpti_ActivityKernel10 kernel(const char* mangled, std::uint64_t start, std::uint64_t end, std::uint32_t correlation) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = correlation;
  k.gridX = 132;
  k.gridY = 1;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.name = mangled;
  return k;
}

CUpti_ActivityAPI api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint64_t start, std::uint64_t end,
                      std::uint32_t correlation) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof a);
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 4242;
  a.threadId = 4243;
  a.correlationId = correlation;
  return a;
}

CUpti_ActivityMarker2 marker(CUpti_ActivityFlag flag, std::uint32_t id, std::uint64_t ts, const char* name,
                             const char* domain, std::uint32_t tid = 4243) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flag;
  m.timestamp = ts;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 4242;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

class TracerRoundTrip : public ::testing::Test {
 protected:
  // One file per test and process: ctest runs the cases of this fixture in parallel.
  std::string path = (std::filesystem::temp_directory_path() /
                      ("kernscope_tracer_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                       "_" + std::to_string(::getpid()) + ".sqlite")).string();
  void TearDown() override { std::filesystem::remove(path); }
};

TEST_F(TracerRoundTrip, DecodedRecordsReadBackAsAnNsysExport) {
  StringPool strings;
  ActivityDecoder decoder(strings, api_name);
  RecordBatch batch;
  const std::uint64_t t0 = 1'000'000'000;
  // Two launches of a templated kernel (mangled, as CUPTI names it) and one graph-node kernel.
  auto launch1 = api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, t0, t0 + 4000, 11);
  auto launch2 = api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, t0 + 10000, t0 + 13000, 12);
  auto k1 = kernel("_Z6gemv_kIfEvPKT_S2_PS0_i", t0 + 5000, t0 + 8000, 11);
  auto k2 = kernel("_Z6gemv_kIfEvPKT_S2_PS0_i", t0 + 14000, t0 + 19000, 12);
  auto k3 = kernel("rmsnorm_kernel", t0 + 20000, t0 + 21000, 13);
  k3.graphNodeId = 77;
  k3.graphId = 5;
  auto drv = api(CUPTI_ACTIVITY_KIND_DRIVER, 307, t0 + 500, t0 + 700, 13);
  CUpti_ActivityMemcpy6 copy;
  std::memset(&copy, 0, sizeof copy);
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 1 << 20;
  copy.start = t0 + 30000;
  copy.end = t0 + 40000;
  copy.streamId = 7;
  copy.correlationId = 14;
  auto memcpy_call = api(CUPTI_ACTIVITY_KIND_RUNTIME, 31, t0 + 29000, t0 + 41000, 14);
  CUpti_ActivitySynchronization2 sync;
  std::memset(&sync, 0, sizeof sync);
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.start = t0 + 41000;
  sync.end = t0 + 42000;
  sync.streamId = 7;
  sync.correlationId = 15;
  auto r_start = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, t0, "decode_step", nullptr);
  auto r_end = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, t0 + 25000, nullptr, nullptr);
  auto d_start = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, t0 + 100, "attention", "engine");
  auto d_end = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, t0 + 200, nullptr, "engine");
  auto open_range = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, t0 + 300, "never_closed", nullptr);
  for (const CUpti_Activity* r : {reinterpret_cast<const CUpti_Activity*>(&launch1), reinterpret_cast<const CUpti_Activity*>(&launch2),
                                  reinterpret_cast<const CUpti_Activity*>(&k1), reinterpret_cast<const CUpti_Activity*>(&k2),
                                  reinterpret_cast<const CUpti_Activity*>(&k3), reinterpret_cast<const CUpti_Activity*>(&drv),
                                  reinterpret_cast<const CUpti_Activity*>(&copy), reinterpret_cast<const CUpti_Activity*>(&memcpy_call),
                                  reinterpret_cast<const CUpti_Activity*>(&sync), reinterpret_cast<const CUpti_Activity*>(&r_start),
                                  reinterpret_cast<const CUpti_Activity*>(&d_start), reinterpret_cast<const CUpti_Activity*>(&d_end),
                                  reinterpret_cast<const CUpti_Activity*>(&r_end), reinterpret_cast<const CUpti_Activity*>(&open_range)}) {
    decoder.decode(r, batch);
  }
  EXPECT_EQ(batch.kernels.size(), 3u);
  EXPECT_EQ(batch.nvtx.size(), 2u);  // the open range waits
  GpuSampleRow sample;
  sample.timestamp = t0 + 5;
  sample.sm_clock_mhz = 1980;
  sample.power_mw = 500000;
  batch.samples.push_back(sample);  // NVML index 0 ...
  DeviceRow device;                 // ... is CUDA device 1 (matched by UUID when read)
  device.id = 1;
  device.name = "NVIDIA H100 80GB HBM3";
  device.uuid = "00112233445566778899aabbccddeeff";
  batch.devices.push_back(device);

  auto writer = TraceDbWriter::create(path, 4242);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  // Two batches, as two flushed buffers would be.
  RecordBatch rest;
  decoder.flush_open_ranges(rest);
  ASSERT_TRUE((*writer)->append(batch, strings).has_value());
  ASSERT_TRUE((*writer)->append(rest, strings).has_value());
  ASSERT_TRUE((*writer)->finish({{"tracer", "kernscope 0.1.0"}, {"dropped_records", "17"},
                                 {"nvml_uuid_0", "GPU-00112233-4455-6677-8899-AABBCCDDEEFF"}}, "python3",
                                {{4243, "MainThread"}}, strings).has_value());
  writer->reset();

  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  EXPECT_EQ(trace->source.format, "kernscope-tracer");
  const auto& k = trace->kernels;
  ASSERT_EQ(k.size(), 3u);
  // nsys's spelling (cu++filt's output for this name on the GPU host, CUDA 13.0).
  EXPECT_EQ(trace->strings.get(k.demangled_name[0]), "void gemv_k<float>(const T1 *, const T1 *, T1 *, int)");
  EXPECT_EQ(trace->strings.get(k.short_name[0]), "gemv_k");
  EXPECT_EQ(trace->strings.get(k.mangled_name[0]), "_Z6gemv_kIfEvPKT_S2_PS0_i");
  EXPECT_EQ(trace->strings.get(k.demangled_name[2]), "rmsnorm_kernel");  // extern "C": not mangled
  EXPECT_EQ(k.graph_node_id[2], 77);
  EXPECT_EQ(k.global_pid[0], std::int64_t{4242} << 24);
  EXPECT_EQ(k.static_smem_bytes[0], 1024);
  EXPECT_EQ(k.dynamic_smem_bytes[0], 2048);
  // The nsys-equal report runs on it unchanged.
  auto sum = run_report(*trace, *parse_report("cuda_gpu_kern_sum"));
  ASSERT_TRUE(sum.has_value());
  ASSERT_EQ(sum->rows.size(), 2u);
  // Launches joined to kernels through correlation ids: runtime calls 11 and 12 launched gemv_k,
  // driver call 13 the graph-node kernel; one row per (call, kernel) with its count.
  auto exec = run_report(*trace, *parse_report("cuda_kern_exec_sum"));
  ASSERT_TRUE(exec.has_value()) << exec.error().message;
  const auto column = [&](const std::string& name) {
    for (std::size_t i = 0; i < exec->columns.size(); ++i) {
      if (exec->columns[i].name == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  std::map<std::pair<std::string, std::string>, std::int64_t> launches;
  for (const auto& row : exec->rows) {
    launches[{std::get<std::string>(row[column("API Name")]), std::get<std::string>(row[column("Kernel Name")])}] =
        std::get<std::int64_t>(row[column("Count")]);
  }
  EXPECT_EQ(launches, (std::map<std::pair<std::string, std::string>, std::int64_t>{
                          {{"cudaLaunchKernel", "void gemv_k<float>(const T1 *, const T1 *, T1 *, int)"}, 2},
                          {{"cuLaunchKernel", "rmsnorm_kernel"}, 1}}));
  ASSERT_EQ(trace->api_calls.size(), 4u);
  std::map<std::string, int> apis;
  for (auto id : trace->api_calls.name) ++apis[std::string(trace->strings.get(id))];
  EXPECT_EQ(apis["cudaLaunchKernel_v7000"], 2);
  EXPECT_EQ(apis["cuLaunchKernel"], 1);
  EXPECT_EQ(trace->api_calls.global_tid[0], (std::int64_t{4242} << 24) | 4243);
  ASSERT_EQ(trace->memcpys.size(), 1u);
  EXPECT_EQ(trace->memcpys.copy_kind[0], 1);
  EXPECT_EQ(trace->memory_kind_labels.at(trace->memcpys.src_kind[0]), "Pageable");
  EXPECT_EQ(trace->memory_kind_labels.at(trace->memcpys.dst_kind[0]), "Device");
  ASSERT_EQ(trace->syncs.size(), 1u);
  EXPECT_EQ(trace->syncs.sync_type[0], 3);
  // NVTX: the default-domain range, the "engine" domain range (plus its domain row), the open one.
  auto nvtx = run_report(*trace, *parse_report("nvtx_sum"));
  ASSERT_TRUE(nvtx.has_value()) << nvtx.error().message;
  std::vector<std::string> ranges;
  for (const auto& row : nvtx->rows) ranges.push_back(std::get<std::string>(row.back()));
  std::sort(ranges.begin(), ranges.end());
  // An unclosed range is listed as nsys lists it (its end is NULL in the file).
  EXPECT_EQ(ranges, (std::vector<std::string>{":decode_step", ":never_closed", "engine:attention"}));
  ASSERT_EQ(trace->gpu_samples.size(), 1u);
  EXPECT_EQ(trace->gpu_samples.sm_clock_mhz[0], 1980);
  EXPECT_EQ(trace->gpu_samples.power_mw[0], 500000);
  EXPECT_EQ(trace->gpu_samples.device_id[0], 1u);
  bool dropped_said = false;
  for (const auto& note : trace->notes) {
    dropped_said |= note.kind == "tracer_dropped_records" && note.count == 17 && note.text.find("17 records dropped") != std::string::npos;
  }
  EXPECT_TRUE(dropped_said);
  ASSERT_EQ(trace->threads.size(), 1u);
  EXPECT_EQ(trace->threads[0].name, "MainThread");
}

// --cuda-graph-trace graph: one CUPTI record per graph execution, written to nsys's table for it,
// read back as GPU busy time that steps count and the overview explains.
TEST_F(TracerRoundTrip, WholeGraphExecutionsReadBackAsGraphExecs) {
  StringPool strings;
  ActivityDecoder decoder(strings, api_name);
  RecordBatch batch;
  const std::uint64_t t0 = 2'000'000'000;
  CUpti_ActivityGraphTrace2 g;
  std::memset(&g, 0, sizeof g);
  g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  g.start = t0 + 1000;
  g.end = t0 + 26000;
  g.deviceId = 0;
  g.contextId = 1;
  g.streamId = 13;
  g.correlationId = 188;
  g.graphId = 2;
  auto launch = api(CUPTI_ACTIVITY_KIND_RUNTIME, 311, t0, t0 + 900, 188);
  auto step_start = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, t0, "decode_step", nullptr);
  auto step_end = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, t0 + 30000, nullptr, nullptr);
  for (const CUpti_Activity* r : {reinterpret_cast<const CUpti_Activity*>(&g), reinterpret_cast<const CUpti_Activity*>(&launch),
                                  reinterpret_cast<const CUpti_Activity*>(&step_start),
                                  reinterpret_cast<const CUpti_Activity*>(&step_end)}) {
    decoder.decode(r, batch);
  }
  EXPECT_EQ(batch.unknown_records, 0);
  ASSERT_EQ(batch.graph_traces.size(), 1u);
  auto writer = TraceDbWriter::create(path, 4242);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  ASSERT_TRUE((*writer)->append(batch, strings).has_value());
  ASSERT_TRUE((*writer)->finish({{"tracer", "kernscope 0.1.0"}}, "app", {}, strings).has_value());
  writer->reset();

  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  ASSERT_TRUE(trace->has(EventKind::kGraphExecs));
  const auto& x = trace->graph_execs;
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x.start_ns[0], static_cast<TimeNs>(t0 + 1000));
  EXPECT_EQ(x.end_ns[0], static_cast<TimeNs>(t0 + 26000));
  EXPECT_EQ(x.stream_id[0], 13u);
  EXPECT_EQ(x.correlation_id[0], 188u);
  EXPECT_EQ(x.graph_id[0], 2);
  EXPECT_EQ(x.global_pid[0], std::int64_t{4242} << 24);
  EXPECT_EQ(trace->kernels.size(), 0u);
}

TEST_F(TracerRoundTrip, UnwritablePathIsAnError) {
  auto writer = TraceDbWriter::create("/nonexistent/dir/t.sqlite", 1);
  ASSERT_FALSE(writer.has_value());
  EXPECT_NE(writer.error().message.find("cannot create"), std::string::npos);
}

TEST(TracerDecoder, MemoryKindsMapToNsysNumbers) {
  EXPECT_EQ(nsys_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), 0);
  EXPECT_EQ(nsys_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), 1);
  EXPECT_EQ(nsys_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE), 2);
  EXPECT_EQ(nsys_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), 6);
  EXPECT_EQ(nsys_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN), 7);
  StringPool strings;
  ActivityDecoder decoder(strings, api_name);
  RecordBatch batch;
  CUpti_Activity other{};
  other.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  decoder.decode(&other, batch);
  EXPECT_EQ(batch.unknown_records, 1);  // counted, not dropped silently
}

TEST(TracerConfig, ParsesEnvironmentAndOutputPatterns) {
  std::map<std::string, std::string> env = {{"KERNSCOPE_CAPTURE_RANGE", "cudaProfilerApi"},
                                            {"KERNSCOPE_CAPTURE_RANGE_END", "repeat:3"},
                                            {"KERNSCOPE_API", "all"},
                                            {"KERNSCOPE_NVML_INTERVAL_MS", "0"},
                                            {"RANK", "5"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto c = config_from_env(getenv);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->capture, TracerConfig::Capture::kProfilerApi);
  EXPECT_TRUE(c->capture_repeat);
  EXPECT_EQ(c->capture_ranges, 3);
  EXPECT_TRUE(c->api_all);
  EXPECT_EQ(c->nvml_interval_ms, 0);
  std::set<std::string> existing = {"run-node1-5-1.sqlite", "run-node1-5-2.sqlite"};
  EXPECT_EQ(expand_output_path("run-%h-%q{RANK}-%n.sqlite", 77, "node1", getenv,
                               [&](const std::string& p) { return existing.contains(p); }),
            "run-node1-5-3.sqlite");
  EXPECT_EQ(expand_output_path("t-%p.sqlite", 77, "h", getenv, [](const std::string&) { return false; }), "t-77.sqlite");
  EXPECT_TRUE(c->records_kind("runtime"));  // no --record: the default kinds, every one but sync
  EXPECT_TRUE(c->records_kind("kernel"));
  EXPECT_TRUE(c->records_kind("nvtx"));
  EXPECT_FALSE(c->records_kind("sync"));
  env["KERNSCOPE_RECORD"] = "all";
  auto all = config_from_env(getenv);
  ASSERT_TRUE(all.has_value());
  for (const auto kind : kRecordKinds) EXPECT_TRUE(all->records_kind(kind)) << kind;
  env["KERNSCOPE_RECORD"] = "kernel,sync";
  auto with_sync = config_from_env(getenv);
  ASSERT_TRUE(with_sync.has_value());
  EXPECT_TRUE(with_sync->records_kind("sync"));
  EXPECT_FALSE(with_sync->records_kind("runtime"));
  env["KERNSCOPE_RECORD"] = "kernel,nvtx";
  auto some = config_from_env(getenv);
  ASSERT_TRUE(some.has_value());
  EXPECT_TRUE(some->records_kind("kernel"));
  EXPECT_TRUE(some->records_kind("nvtx"));
  EXPECT_FALSE(some->records_kind("runtime"));
  EXPECT_FALSE(c->hw_trace);  // CUPTI's hardware timestamps only when asked
  env["KERNSCOPE_HW_TRACE"] = "1";
  auto hw = config_from_env(getenv);
  ASSERT_TRUE(hw.has_value());
  EXPECT_TRUE(hw->hw_trace);
  env["KERNSCOPE_HW_TRACE"] = "yes";
  EXPECT_FALSE(config_from_env(getenv).has_value());
  env.erase("KERNSCOPE_HW_TRACE");
  env["KERNSCOPE_RECORD"] = "kernel,bogus";
  EXPECT_FALSE(config_from_env(getenv).has_value());
  env.erase("KERNSCOPE_RECORD");
  env["KERNSCOPE_CAPTURE_RANGE"] = "nvtx:measure:decode_step@engine";
  auto n = config_from_env(getenv);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->capture, TracerConfig::Capture::kNvtx);
  EXPECT_EQ(n->nvtx_range, "measure:decode_step");
  EXPECT_EQ(n->nvtx_domain, "engine");
  env["KERNSCOPE_CAPTURE_RANGE"] = "nvtx:";
  EXPECT_FALSE(config_from_env(getenv).has_value());
  env["KERNSCOPE_CAPTURE_RANGE"] = "cudaProfilerApi";
  env["KERNSCOPE_CAPTURE_RANGE_END"] = "repeat:0";
  EXPECT_FALSE(config_from_env(getenv).has_value());
  env["KERNSCOPE_CAPTURE_RANGE_END"] = "stop";
  env["KERNSCOPE_DELAY_S"] = "-1";
  EXPECT_FALSE(config_from_env(getenv).has_value());
  env.erase("KERNSCOPE_DELAY_S");
  EXPECT_TRUE(config_from_env(getenv)->graph_nodes);  // graph nodes itemized unless asked
  env["KERNSCOPE_CUDA_GRAPH_TRACE"] = "graph";
  EXPECT_FALSE(config_from_env(getenv)->graph_nodes);
  env["KERNSCOPE_CUDA_GRAPH_TRACE"] = "nodes";
  EXPECT_FALSE(config_from_env(getenv).has_value());
  env["KERNSCOPE_CUDA_GRAPH_TRACE"] = "node";
  env["KERNSCOPE_FLUSH_MS"] = "0";
  EXPECT_EQ(config_from_env(getenv)->flush_ms, 0);
  env["KERNSCOPE_FLUSH_MS"] = "-5";
  EXPECT_FALSE(config_from_env(getenv).has_value());
}

TEST(TracerBufferPool, HandsOutPreallocatedBuffersAndCountsExhaustion) {
  BufferPool pool(2, 1000);
  auto* a = pool.take();
  auto* b = pool.take();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.exhausted(), 1u);
  pool.give_back(a);
  EXPECT_EQ(pool.take(), a);
}

// CUPTI is told the buffers come zeroed (so it does not zero them on the program's thread): a
// buffer must be all zeros when first handed out and again after it was filled and given back.
TEST(TracerBufferPool, HandsOutZeroedBuffersAgainAfterUse) {
  BufferPool pool(1, 4096);
  auto* a = pool.take();
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(std::all_of(a, a + 4096, [](std::uint8_t b) { return b == 0; }));
  std::memset(a, 0xAB, 4096);
  pool.give_back(a);
  auto* again = pool.take();
  ASSERT_EQ(again, a);
  EXPECT_TRUE(std::all_of(again, again + 4096, [](std::uint8_t b) { return b == 0; }));
}

// A fake NVML: fixed readings for two devices.
int fake_ok() { return 0; }
int fake_count(unsigned* n) { *n = 2; return 0; }
int fake_handle(unsigned i, void** h) { *h = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + 1)); return 0; }
int fake_uuid(void* h, char* out, unsigned n) { std::snprintf(out, n, "GPU-%zu", reinterpret_cast<std::uintptr_t>(h)); return 0; }
int fake_clock(void* h, int type, unsigned* v) { *v = type == 1 ? 1980 : 2619 + static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(h)); return 0; }
int fake_power(void*, unsigned* v) { *v = 412000; return 0; }
int fake_temperature(void*, int, unsigned* v) { *v = 41; return 0; }
int fake_util(void*, NvmlApi::Utilization* u) { u->gpu = 87; u->memory = 30; return 0; }
int fake_reasons(void*, unsigned long long* r) { *r = 4; return 0; }
int fake_fail_init() { return 1; }

// NVML with two devices and nothing else to ask: what both sampler tests start from.
NvmlApi two_devices() {
  NvmlApi api;
  api.init = fake_ok;
  api.shutdown = fake_ok;
  api.device_count = fake_count;
  api.device_handle = fake_handle;
  return api;
}

TEST(TracerNvml, SamplesEveryDeviceWithTheTraceClock) {
  NvmlApi api = two_devices();
  api.device_uuid = fake_uuid;
  api.clock_info = fake_clock;
  api.power_usage = fake_power;
  api.temperature = fake_temperature;
  api.utilization = fake_util;
  api.clock_event_reasons = fake_reasons;  // memory_info and PCIe missing: left at -1
  std::int64_t now = 100;
  NvmlSampler sampler(api, [&] { return now++; }, 0, true);
  ASSERT_TRUE(sampler.start());
  sampler.sample_once();
  std::vector<GpuSampleRow> rows;
  sampler.drain(rows);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].timestamp, 100);
  EXPECT_EQ(rows[1].device, 1u);
  EXPECT_EQ(rows[1].mem_clock_mhz, 2621);
  EXPECT_EQ(rows[0].power_mw, 412000);
  EXPECT_EQ(rows[0].gpu_util, 87);
  EXPECT_EQ(rows[0].clock_event_reasons, 4u);
  EXPECT_EQ(rows[0].mem_used_bytes, -1);
  EXPECT_EQ(rows[0].pcie_tx_kbps, -1);
  EXPECT_EQ(sampler.uuids(), (std::vector<std::string>{"GPU-1", "GPU-2"}));
  sampler.stop();

  api.init = fake_fail_init;
  NvmlSampler broken(api, [] { return 0; }, 10, false);
  EXPECT_FALSE(broken.start());
  EXPECT_NE(broken.why().find("nvmlInit failed"), std::string::npos);
}

std::atomic<int> g_fake_power_calls{0};
int fake_counted_power(void*, unsigned* v) {
  ++g_fake_power_calls;
  *v = 1;
  return 0;
}

// Paused tracing keeps no GPU sample from outside its windows, so the sampler's thread must not
// call NVML between them (issue 30: paused should cost nothing). Breaks if the thread ignores
// set_active (samples while paused) or never wakes on it (no samples in the window).
TEST(TracerNvml, SamplesOnlyWhileActive) {
  NvmlApi api = two_devices();
  api.power_usage = fake_counted_power;
  g_fake_power_calls = 0;
  NvmlSampler sampler(api, [] { return std::int64_t{0}; }, 1, false);
  sampler.set_active(false);
  ASSERT_TRUE(sampler.start());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // 50 intervals paused
  EXPECT_EQ(g_fake_power_calls.load(), 0);
  sampler.set_active(true);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (g_fake_power_calls.load() < 6 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(g_fake_power_calls.load(), 6);  // 2 devices, at least 3 rounds
  sampler.set_active(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a round in flight ends
  const int after_pause = g_fake_power_calls.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(g_fake_power_calls.load(), after_pause);
  std::vector<GpuSampleRow> rows;
  sampler.drain(rows);
  EXPECT_EQ(static_cast<int>(rows.size()), after_pause);  // one row per device per round
  sampler.stop();
}

}  // namespace
}  // namespace kernscope::tracer
