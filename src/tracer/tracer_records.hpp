// What the tracer decodes from CUPTI before writing it: plain rows, no CUPTI types, so the writer
// and its tests need no GPU. Strings (kernel names, API names, NVTX text) are interned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernscope/string_pool.hpp"

namespace kernscope::tracer {

struct KernelRow {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::int32_t registers = 0, static_smem = 0, dynamic_smem = 0, launch_type = 0;
  std::int64_t local_memory_total = 0, grid_id = 0;
  std::uint64_t graph_node_id = 0;
  std::uint32_t graph_id = 0;
  StringId demangled = kNoString, short_name = kNoString, mangled = kNoString;
};

struct MemcpyRow {
  std::int64_t start = 0, end = 0, bytes = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int32_t copy_kind = 0, src_kind = 7, dst_kind = 7;  // nsys's ENUM_CUDA_MEM_KIND (7: unknown)
  std::uint64_t graph_node_id = 0;
};

struct MemsetRow {
  std::int64_t start = 0, end = 0, bytes = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0, value = 0;
  std::int32_t mem_kind = 7;
  std::uint64_t graph_node_id = 0;
};

// One execution of a whole CUDA graph (--cuda-graph-trace graph): its nodes are not itemized.
struct GraphTraceRow {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0, graph_id = 0;
};

struct ApiRow {
  std::int64_t start = 0, end = 0;
  std::uint32_t pid = 0, tid = 0, correlation = 0, return_value = 0;
  bool driver = false;
  StringId name = kNoString;
};

struct SyncRow {
  std::int64_t start = 0, end = 0;
  std::uint32_t context = 0, stream = 0, correlation = 0, event_id = 0;
  std::int32_t type = 0;
};

// NVTX ranges and marks, paired from CUPTI's start/end marker records.
struct NvtxRow {
  std::int64_t start = 0, end = -1;  // -1: a mark (or a range that never ended)
  std::uint32_t pid = 0, tid = 0, end_tid = 0;
  std::int32_t event_type = 59;      // nsys numbering: 34 mark, 59 push/pop, 60 start/end
  StringId text = kNoString;
  StringId domain = kNoString;       // kNoString: the default domain
};

struct OverheadRow {
  std::int64_t start = 0, end = 0;
  std::uint32_t pid = 0, tid = 0;
  StringId name = kNoString;
};

struct DeviceRow {
  std::uint32_t id = 0;
  std::string name, uuid;
  std::int64_t global_memory_bytes = 0, memory_bandwidth = 0, clock_rate_khz = 0, l2_cache_bytes = 0;
  std::int32_t sm_count = 0, compute_major = 0, compute_minor = 0, threads_per_warp = 0;
};

struct GpuSampleRow {
  std::int64_t timestamp = 0;
  std::uint32_t device = 0;
  std::int32_t sm_clock_mhz = -1, mem_clock_mhz = -1, temperature_c = -1, gpu_util = -1, mem_util = -1;
  std::int64_t power_mw = -1, mem_used_bytes = -1, pcie_tx_kbps = -1, pcie_rx_kbps = -1;
  std::uint64_t clock_event_reasons = 0;
};

// A stretch of a CUDA-calling thread's time in which it was busy on a CPU (used half of the wall
// time or more) or not (thread_cpu_sampler.hpp): KERNSCOPE_THREAD_CPU.
struct ThreadCpuRow {
  std::uint32_t tid = 0;
  std::int64_t start = 0, end = 0;
  std::int64_t cpu_ns = 0;  // CPU time the thread used in [start, end)
  std::uint8_t busy = 0;
};

// A recording window of a live capture or a capture range (KERNSCOPE_CAPTURE_WINDOWS): written when
// it opens, with end -1, and again when it closes, so a file cut during a window says so.
struct CaptureWindowRow {
  std::int64_t id = 0;
  std::int64_t start = 0, end = -1;
  std::string opened_by, closed_by;
};

// One batch of decoded rows (a flushed CUPTI buffer, or several).
struct RecordBatch {
  std::vector<KernelRow> kernels;
  std::vector<MemcpyRow> memcpys;
  std::vector<MemsetRow> memsets;
  std::vector<GraphTraceRow> graph_traces;
  std::vector<ApiRow> api_calls;
  std::vector<SyncRow> syncs;
  std::vector<NvtxRow> nvtx;
  std::vector<OverheadRow> overheads;
  std::vector<DeviceRow> devices;
  std::vector<GpuSampleRow> samples;
  std::vector<ThreadCpuRow> thread_cpu;
  std::vector<CaptureWindowRow> windows;
  std::int64_t unknown_records = 0;  // record kinds the decoder does not map (counted, reported)

  bool empty() const {
    return kernels.empty() && memcpys.empty() && memsets.empty() && graph_traces.empty() && api_calls.empty() && syncs.empty() &&
           nvtx.empty() && overheads.empty() && devices.empty() && samples.empty() && thread_cpu.empty() && windows.empty();
  }
  void clear() { *this = RecordBatch{}; }
};

}  // namespace kernscope::tracer
