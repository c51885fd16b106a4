#include "tracer/activity_decoder.hpp"

#include <cstdio>
#include <cstring>

#include "base/nsys_demangle.hpp"
#include "model/kernel_short_name.hpp"

namespace kernscope::tracer {

std::int32_t nsys_memory_kind(std::uint32_t cupti_kind) {
  // CUPTI: 0 unknown, 1 pageable, 2 pinned, 3 device, 4 array, 5 managed, 6 device static, 7 managed static.
  return cupti_kind >= 1 && cupti_kind <= 7 ? static_cast<std::int32_t>(cupti_kind) - 1 : 7;
}

StringId ActivityDecoder::api(bool driver, std::uint32_t cbid) {
  const std::uint64_t key = (static_cast<std::uint64_t>(driver) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it == api_names_.end()) it = api_names_.emplace(key, strings_.intern(api_name_(driver, cbid))).first;
  return it->second;
}

void ActivityDecoder::new_epoch() {
  correlation_base_ = max_correlation_.load();
  marker_base_ = max_marker_.load();
}

std::uint32_t ActivityDecoder::correlation(std::uint32_t id) {
  if (id == 0) return 0;  // none
  const std::uint32_t moved = id + correlation_base_.load(std::memory_order_relaxed);
  if (moved > max_correlation_.load(std::memory_order_relaxed)) max_correlation_.store(moved, std::memory_order_relaxed);
  return moved;
}

std::uint32_t ActivityDecoder::marker_id(std::uint32_t id) {
  const std::uint32_t moved = id + marker_base_.load(std::memory_order_relaxed);
  if (moved > max_marker_.load(std::memory_order_relaxed)) max_marker_.store(moved, std::memory_order_relaxed);
  return moved;
}

const ActivityDecoder::KernelNames& ActivityDecoder::kernel_names(const char* mangled) {
  const std::string key = mangled ? mangled : "";
  auto it = kernel_names_.find(key);
  if (it != kernel_names_.end()) return it->second;
  // Spelled as nsys spells it, so traces of one program from kernscope and nsys join by name;
  // extern "C" kernels stay as they are.
  const std::string readable = nsys_demangle(key);
  KernelNames names{strings_.intern(readable), strings_.intern(kernel_short_name(readable)), strings_.intern(key)};
  return kernel_names_.emplace(key, names).first->second;
}

void ActivityDecoder::marker(const CUpti_ActivityMarker2& m, RecordBatch& out) {
  const bool on_thread = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  const std::uint32_t pid = on_thread ? m.objectId.pt.processId : 0;
  const std::uint32_t tid = on_thread ? m.objectId.pt.threadId : 0;
  const auto ts = static_cast<std::int64_t>(m.timestamp);
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    NvtxRow row;
    row.start = ts;
    row.pid = pid;
    row.tid = tid;
    row.event_type = 34;
    row.text = strings_.intern(m.name ? m.name : "");
    row.domain = m.domain && *m.domain ? strings_.intern(m.domain) : kNoString;
    out.nvtx.push_back(row);
    return;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    NvtxRow row;
    row.start = ts;
    row.pid = pid;
    row.tid = tid;
    row.text = strings_.intern(m.name ? m.name : "");
    row.domain = m.domain && *m.domain ? strings_.intern(m.domain) : kNoString;
    open_ranges_[marker_id(m.id)] = row;
    return;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_ranges_.find(marker_id(m.id));
    if (it == open_ranges_.end()) return;  // started before the capture range
    NvtxRow row = it->second;
    open_ranges_.erase(it);
    row.end = ts;
    row.end_tid = tid;
    // CUPTI does not say which NVTX API made the range: one that ends on its own thread is
    // reported as push/pop, one that ends elsewhere as start/end.
    row.event_type = tid == row.tid ? 59 : 60;
    out.nvtx.push_back(row);
  }
}

void ActivityDecoder::flush_open_ranges(RecordBatch& out) {
  for (auto& [id, row] : open_ranges_) out.nvtx.push_back(row);
  open_ranges_.clear();
}

void ActivityDecoder::decode(const CUpti_Activity* record, RecordBatch& out) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      KernelRow row;
      row.start = static_cast<std::int64_t>(k.start);
      row.end = static_cast<std::int64_t>(k.end);
      row.device = k.deviceId;
      row.context = k.contextId;
      row.stream = k.streamId;
      row.correlation = correlation(k.correlationId);
      row.grid[0] = k.gridX;
      row.grid[1] = k.gridY;
      row.grid[2] = k.gridZ;
      row.block[0] = k.blockX;
      row.block[1] = k.blockY;
      row.block[2] = k.blockZ;
      row.registers = k.registersPerThread;
      row.static_smem = k.staticSharedMemory;
      row.dynamic_smem = k.dynamicSharedMemory;
      row.launch_type = k.launchType;
      row.local_memory_total = static_cast<std::int64_t>(k.localMemoryTotal_v2);
      row.grid_id = k.gridId;
      row.graph_node_id = k.graphNodeId;
      row.graph_id = k.graphId;
      const KernelNames& names = kernel_names(k.name);
      row.demangled = names.demangled;
      row.short_name = names.short_name;
      row.mangled = names.mangled;
      out.kernels.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      MemcpyRow row;
      row.start = static_cast<std::int64_t>(m.start);
      row.end = static_cast<std::int64_t>(m.end);
      row.bytes = static_cast<std::int64_t>(m.bytes);
      row.device = m.deviceId;
      row.context = m.contextId;
      row.stream = m.streamId;
      row.correlation = correlation(m.correlationId);
      row.copy_kind = m.copyKind;  // CUPTI and nsys number copy kinds alike
      row.src_kind = nsys_memory_kind(m.srcKind);
      row.dst_kind = nsys_memory_kind(m.dstKind);
      row.graph_node_id = m.graphNodeId;
      out.memcpys.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      MemsetRow row;
      row.start = static_cast<std::int64_t>(m.start);
      row.end = static_cast<std::int64_t>(m.end);
      row.bytes = static_cast<std::int64_t>(m.bytes);
      row.device = m.deviceId;
      row.context = m.contextId;
      row.stream = m.streamId;
      row.correlation = correlation(m.correlationId);
      row.value = m.value;
      row.mem_kind = nsys_memory_kind(m.memoryKind);
      row.graph_node_id = m.graphNodeId;
      out.memsets.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      const auto& g = *reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
      GraphTraceRow row;
      row.start = static_cast<std::int64_t>(g.start);
      row.end = static_cast<std::int64_t>(g.end);
      row.device = g.deviceId;
      row.context = g.contextId;
      row.stream = g.streamId;
      row.correlation = correlation(g.correlationId);
      row.graph_id = g.graphId;
      out.graph_traces.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
      ApiRow row;
      row.start = static_cast<std::int64_t>(a.start);
      row.end = static_cast<std::int64_t>(a.end);
      row.pid = a.processId;
      row.tid = a.threadId;
      row.correlation = correlation(a.correlationId);
      row.return_value = a.returnValue;
      row.driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      row.name = api(row.driver, a.cbid);
      out.api_calls.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      SyncRow row;
      row.start = static_cast<std::int64_t>(s.start);
      row.end = static_cast<std::int64_t>(s.end);
      row.context = s.contextId;
      row.stream = s.streamId;
      row.correlation = correlation(s.correlationId);
      row.event_id = s.cudaEventId;
      row.type = static_cast<std::int32_t>(s.type);
      out.syncs.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      marker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record), out);
      return;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& o = *reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      OverheadRow row;
      row.start = static_cast<std::int64_t>(o.start);
      row.end = static_cast<std::int64_t>(o.end);
      if (o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || o.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        row.pid = o.objectId.pt.processId;
        row.tid = o.objectId.pt.threadId;
      }
      const char* what = "CUPTI overhead";
      switch (o.overheadKind) {
        case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: what = "CUDA driver compiler"; break;
        case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: what = "CUPTI buffer flush"; break;
        case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: what = "CUPTI instrumentation"; break;
        case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: what = "CUPTI resource"; break;
        default: break;
      }
      row.name = strings_.intern(what);
      out.overheads.push_back(row);
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& d = *reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      DeviceRow row;
      row.id = d.id;
      row.name = d.name ? d.name : "";
      row.global_memory_bytes = static_cast<std::int64_t>(d.globalMemorySize);
      row.memory_bandwidth = static_cast<std::int64_t>(d.globalMemoryBandwidth) * 1000;  // KB/s -> B/s
      row.clock_rate_khz = d.coreClockRate;
      row.l2_cache_bytes = d.l2CacheSize;
      row.sm_count = static_cast<std::int32_t>(d.numMultiprocessors);
      row.compute_major = static_cast<std::int32_t>(d.computeCapabilityMajor);
      row.compute_minor = static_cast<std::int32_t>(d.computeCapabilityMinor);
      row.threads_per_warp = static_cast<std::int32_t>(d.numThreadsPerWarp);
      char uuid[40];
      for (int i = 0; i < 16; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", static_cast<unsigned char>(d.uuid.bytes[i]));
      row.uuid = uuid;
      out.devices.push_back(row);
      return;
    }
    default:
      ++out.unknown_records;
      return;
  }
}

}  // namespace kernscope::tracer
