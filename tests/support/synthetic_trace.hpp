// Builds small traces in memory whose right answers hold by construction.
#pragma once

#include "kernscope/trace.hpp"

namespace kernscope::testing {

inline constexpr std::int64_t kPid = 100;
inline std::int64_t global_pid(std::int64_t pid = kPid) { return pid << 24; }
inline std::int64_t global_tid(std::int64_t tid, std::int64_t pid = kPid) { return (pid << 24) | tid; }

class SyntheticTrace {
 public:
  SyntheticTrace() {
    trace.source.path = "synthetic";
    trace.present = kAllEventKinds;
    trace.loaded = kAllEventKinds;
    Device gpu;
    gpu.name = "Test GPU";
    trace.devices.push_back(gpu);
    trace.memcpy_kind_labels = {{1, "Host-to-Device"}, {2, "Device-to-Host"}};
    trace.memory_kind_labels = {{0, "Pageable"}, {2, "Device"}};
  }

  void kernel(const std::string& name, TimeNs start, TimeNs end, std::uint32_t correlation = 0,
              std::int64_t gpid = global_pid(), std::uint32_t stream = 7) {
    auto& k = trace.kernels;
    const StringId id = trace.strings.intern(name);
    k.start_ns.push_back(start);
    k.end_ns.push_back(end);
    k.global_pid.push_back(gpid);
    k.device_id.push_back(0);
    k.context_id.push_back(0);
    k.green_context_id.push_back(0);
    k.stream_id.push_back(stream);
    k.correlation_id.push_back(correlation);
    for (auto* col : {&k.grid_x, &k.grid_y, &k.grid_z, &k.block_x, &k.block_y, &k.block_z}) col->push_back(1);
    for (auto* col : {&k.registers_per_thread, &k.static_smem_bytes, &k.dynamic_smem_bytes, &k.launch_type}) col->push_back(0);
    k.graph_node_id.push_back(0);
    k.graph_id.push_back(0);
    k.external_id.push_back(0);
    k.demangled_name.push_back(id);
    k.short_name.push_back(id);
    k.mangled_name.push_back(id);
  }

  // A whole CUDA-graph execution (graphs traced as units), launched by the call with `correlation`.
  void graph_exec(TimeNs start, TimeNs end, std::uint32_t correlation, std::int64_t graph_exec_id = 2) {
    auto& g = trace.graph_execs;
    g.start_ns.push_back(start);
    g.end_ns.push_back(end);
    g.global_pid.push_back(global_pid());
    g.graph_id.push_back(graph_exec_id);
    g.graph_exec_id.push_back(graph_exec_id);
    g.device_id.push_back(0);
    g.context_id.push_back(1);
    g.stream_id.push_back(7);
    g.correlation_id.push_back(correlation);
  }

  // A copy (nsys's copy kinds: 1 HtoD, 2 DtoH, 8 DtoD; memory kinds: 0 pageable, 2 device).
  void memcpy(TimeNs start, TimeNs end, std::int32_t copy_kind, std::uint32_t correlation, std::int32_t src_kind = 2,
              std::int32_t dst_kind = 2, std::int64_t gpid = global_pid()) {
    auto& m = trace.memcpys;
    m.start_ns.push_back(start);
    m.end_ns.push_back(end);
    m.global_pid.push_back(gpid);
    m.bytes.push_back(1 << 20);
    m.graph_node_id.push_back(0);
    m.device_id.push_back(0);
    m.context_id.push_back(0);
    m.green_context_id.push_back(0);
    m.stream_id.push_back(8);
    m.correlation_id.push_back(correlation);
    m.copy_kind.push_back(copy_kind);
    m.src_kind.push_back(src_kind);
    m.dst_kind.push_back(dst_kind);
    m.src_device_id.push_back(-1);
    m.dst_device_id.push_back(-1);
  }

  // A stretch of a thread's time busy on a CPU or not (the tracer's KERNSCOPE_THREAD_CPU).
  void thread_cpu(TimeNs start, TimeNs end, bool busy, std::int64_t gtid = global_tid(1)) {
    auto& c = trace.thread_cpu;
    c.global_tid.push_back(gtid);
    c.start_ns.push_back(start);
    c.end_ns.push_back(end);
    c.cpu_ns.push_back(busy ? end - start : 0);
    c.busy.push_back(busy ? 1 : 0);
  }

  void api(const std::string& name, TimeNs start, TimeNs end, std::uint32_t correlation, std::int64_t gtid = global_tid(1)) {
    auto& a = trace.api_calls;
    a.start_ns.push_back(start);
    a.end_ns.push_back(end);
    a.global_tid.push_back(gtid);
    a.correlation_id.push_back(correlation);
    a.name.push_back(trace.strings.intern(name));
    a.return_value.push_back(0);
    a.event_class.push_back(0);
  }

  void nvtx(std::int32_t type, const std::string& text, TimeNs start, TimeNs end, std::int64_t gtid = global_tid(1),
            std::int64_t domain = 0) {
    auto& n = trace.nvtx;
    n.start_ns.push_back(start);
    n.end_ns.push_back(end);
    n.global_tid.push_back(gtid);
    n.end_global_tid.push_back(0);
    n.event_type.push_back(type);
    n.domain_id.push_back(domain);
    n.text.push_back(trace.strings.intern(text));
    n.category.push_back(0);
    n.color.push_back(0);
    n.payload_kind.push_back(PayloadKind::kNone);
    n.payload_int.push_back(0);
    n.payload_double.push_back(0);
  }

  Trace trace;
};

}  // namespace kernscope::testing
