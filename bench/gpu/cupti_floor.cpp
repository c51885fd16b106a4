// The least a CUPTI kernel tracer can cost: an injection library (CUDA_INJECTION64_PATH) that turns
// on CUPTI's CONCURRENT_KERNEL records between cudaProfilerStart and cudaProfilerStop, hands CUPTI
// preallocated buffers, counts the records and throws them away. No decoding, no SQLite, no other
// record kinds. Beside `kernscope record --record kernel` in the same A/B benchmark it shows how
// much of the tracer's cost is CUPTI's own per-kernel cost and how much is kernscope's.
//
//   g++ -std=c++17 -O2 -shared -fPIC cupti_floor.cpp -I$CUDA/include -L$CUDA/lib64 -lcupti -o libcupti_floor.so
//   CUDA_INJECTION64_PATH=$PWD/libcupti_floor.so python3 llama_ab.py
//
// Whole-program floor (issue 18: the cost a user pays for `record -- python3 app.py`): with
// CUPTI_FLOOR_WHOLE_PROGRAM=1 the records are on from CUDA's start to exit, as kernscope's defaults are;
// CUPTI_FLOOR_RUNTIME=1 adds CUPTI's RUNTIME records (every runtime call, the kind switched on whole).
//
// What CUPTI costs attached but paused (issue 30), without CUPTI_FLOOR_WHOLE_PROGRAM and with a
// program that never calls cudaProfilerStart: the buffer callbacks registered and the profiler
// calls' callbacks subscribed, nothing else. Each of the states kernscope's paused tracer keeps on
// top of that can be added alone: CUPTI_FLOOR_GRAPH_TRACE=1 enables whole-graph records for the run
// (kernscope does so at start with --cuda-graph-trace graph), CUPTI_FLOOR_PROFILER_RECORDS=1 enables the API records of
// cudaProfilerStart/Stop and cuProfilerStart/Stop alone (kernscope keeps those on between windows),
// CUPTI_FLOOR_DEVICE=1 the DEVICE kind.
//
// In one process (CUPTI_FLOOR_AB=1, no profiler-call subscription): the program calls
// cupti_floor_attach(0) to detach CUPTI (cuptiFinalize, after a flush; the program has synchronized)
// and cupti_floor_attach(1) to attach it again in the state above, so that blocks with CUPTI attached
// and detached alternate and the host's drift between processes falls out (launch_cost attach-ab,
// llama_ab.py with ATTACH_AB=1).
#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 8u << 20;
std::mutex g_mutex;
std::vector<uint8_t*> g_free;
std::atomic<long> g_records{0}, g_dropped{0}, g_no_buffer{0};

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *max_records = 0;
  if (g_free.empty()) {
    ++g_no_buffer;
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = g_free.back();
  g_free.pop_back();
  *size = kBufferBytes;
}

void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_dropped += static_cast<long>(dropped);
  if (!buffer) return;
  CUpti_Activity* record = nullptr;
  long n = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++n;
  g_records += n;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_free.push_back(buffer);
}

void CUPTIAPI on_profiler_api(void*, CUpti_CallbackDomain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 && info->callbackSite == CUPTI_API_EXIT) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  } else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 && info->callbackSite == CUPTI_API_ENTER) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }
}

void report() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::fprintf(stderr, "cupti_floor: %ld records, %ld dropped, %ld buffer requests unmet\n", g_records.load(),
               g_dropped.load(), g_no_buffer.load());
}

// The paused states asked for by the environment (see the top of the file).
void enable_paused_state() {
  if (std::getenv("CUPTI_FLOOR_DEVICE")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
  if (std::getenv("CUPTI_FLOOR_GRAPH_TRACE")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  if (std::getenv("CUPTI_FLOOR_PROFILER_RECORDS")) {
    cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1);
    cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 1);
    cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1);
    cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 1);
  }
}

bool g_attached = true;

}  // namespace

// 0 on success. Detaching flushes first; attaching registers the buffers again and restores the
// paused state.
extern "C" __attribute__((visibility("default"))) int cupti_floor_attach(int on) {
  if ((on != 0) == g_attached) return 0;
  if (!on) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (cuptiFinalize() != CUPTI_SUCCESS) return 1;
    g_attached = false;
    return 0;
  }
  if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) return 1;
  cuptiActivityFlushPeriod(100);
  enable_paused_state();
  g_attached = true;
  return 0;
}

namespace {

void report_if_attached() {
  if (g_attached) report();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  for (int i = 0; i < 32; ++i) {
    if (auto* b = static_cast<uint8_t*>(std::calloc(1, kBufferBytes))) g_free.push_back(b);
  }
  if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) return 1;
  if (!std::getenv("CUPTI_FLOOR_AB")) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_profiler_api), nullptr) != CUPTI_SUCCESS) return 1;
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
  }
  cuptiActivityFlushPeriod(100);
  enable_paused_state();
  if (std::getenv("CUPTI_FLOOR_WHOLE_PROGRAM")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (std::getenv("CUPTI_FLOOR_RUNTIME")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  }
  std::atexit(report_if_attached);
  return 1;
}
