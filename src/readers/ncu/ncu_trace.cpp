#include "readers/ncu/ncu_trace.hpp"

#include <set>

namespace kernscope::readers::ncu {
namespace {

std::int64_t metric_or(const NcuKernel& k, const std::string& name, std::int64_t fallback = 0) {
  const auto it = k.metrics.find(name);
  return it == k.metrics.end() ? fallback : static_cast<std::int64_t>(it->second.value);
}

Device device_of(const NcuKernel& k) {
  Device d;
  d.id = k.device;
  d.cuda_id = k.device;
  const auto name = k.text_values.find("device__attribute_display_name");
  if (name != k.text_values.end()) d.name = name->second;
  d.sm_count = metric_or(k, "device__attribute_multiprocessor_count");
  d.total_memory_bytes = metric_or(k, "device__attribute_total_memory");
  d.l2_cache_bytes = metric_or(k, "device__attribute_l2_cache_size");
  d.clock_rate_hz = metric_or(k, "device__attribute_max_gpu_frequency_khz", metric_or(k, "device__attribute_clock_rate")) * 1000;
  // Peak DRAM bandwidth: two transfers per memory clock (kHz) over the bus width (bits).
  const std::int64_t memory_khz = metric_or(k, "device__attribute_memory_clock_rate", metric_or(k, "device__attribute_max_mem_frequency_khz"));
  const std::int64_t bus_bits = metric_or(k, "device__attribute_global_memory_bus_width", metric_or(k, "device__attribute_fb_bus_width"));
  d.memory_bandwidth_bytes_per_s = 2 * memory_khz * 1000 * bus_bits / 8;
  d.compute_major = static_cast<std::int32_t>(metric_or(k, "device__attribute_compute_capability_major"));
  d.compute_minor = static_cast<std::int32_t>(metric_or(k, "device__attribute_compute_capability_minor"));
  if (d.compute_major == 0 && !k.compute_capability.empty()) {
    // "9.0" from the CC column (the details page has no device attributes).
    d.compute_major = std::atoi(k.compute_capability.c_str());
    const auto dot = k.compute_capability.find('.');
    if (dot != std::string::npos) d.compute_minor = std::atoi(k.compute_capability.c_str() + dot + 1);
  }
  return d;
}

}  // namespace

Trace trace_from_ncu(const NcuReport& report) {
  Trace trace;
  trace.source.format = "ncu-csv";
  trace.source.path = report.source;
  trace.source.metadata.emplace_back("ncu_page", report.page == NcuPage::kRaw ? "raw" : "details");
  KernelColumns& kc = trace.kernels;
  std::set<std::int64_t> devices, processes;
  TimeNs clock = 0;
  std::size_t without_duration = 0;
  for (const NcuKernel& k : report.kernels) {
    KernelColumns::visit(kc, [](auto& column) { column.emplace_back(); });
    const std::size_t i = kc.size() - 1;
    const TimeNs duration = k.duration_ns ? static_cast<TimeNs>(*k.duration_ns + 0.5) : 0;
    if (!k.duration_ns) ++without_duration;
    kc.start_ns[i] = clock;
    kc.end_ns[i] = clock + duration;
    clock += duration;
    kc.global_pid.set(i, k.process_id << 24);
    kc.device_id.set(i, static_cast<std::uint32_t>(k.device));
    kc.context_id.set(i, static_cast<std::uint32_t>(k.context));
    kc.stream_id.set(i, static_cast<std::uint32_t>(k.stream));
    kc.correlation_id[i] = static_cast<std::uint32_t>(k.id + 1);
    if (k.grid) {
      kc.grid_x[i] = (*k.grid)[0];
      kc.grid_y[i] = (*k.grid)[1];
      kc.grid_z[i] = (*k.grid)[2];
    }
    if (k.block) {
      kc.block_x[i] = (*k.block)[0];
      kc.block_y[i] = (*k.block)[1];
      kc.block_z[i] = (*k.block)[2];
    }
    kc.registers_per_thread[i] = static_cast<std::int32_t>(metric_or(k, "launch__registers_per_thread"));
    kc.static_smem_bytes[i] = static_cast<std::int32_t>(metric_or(k, "launch__shared_mem_per_block_static"));
    kc.dynamic_smem_bytes[i] = static_cast<std::int32_t>(metric_or(k, "launch__shared_mem_per_block_dynamic"));
    kc.demangled_name[i] = trace.strings.intern(k.demangled);
    kc.short_name[i] = trace.strings.intern(k.join_name);
    kc.mangled_name[i] = trace.strings.intern(k.mangled.empty() ? k.demangled : k.mangled);
    if (devices.insert(k.device).second) trace.devices.push_back(device_of(k));
    if (processes.insert(k.process_id).second) trace.processes.push_back(Process{k.process_id << 24, k.process_id, k.process_name});
  }
  trace.present = trace.loaded = bit(EventKind::kKernels);
  trace.note("ncu_source", NoteSeverity::kInfo, "Nsight Compute export (" + std::string(report.page == NcuPage::kRaw ? "--page raw" : "--page details") +
                        "): " + std::to_string(report.kernels.size()) +
                        " profiled launch(es) laid end to end in profiling order; ncu serializes and replays kernels, "
                        "so gaps, overlap and host activity are not in it");
  if (without_duration > 0) {
    trace.note("ncu_launches_without_duration", NoteSeverity::kDataLoss, std::to_string(without_duration) + " launch(es) without gpu__time_duration (zero length here)");
  }
  return trace;
}

}  // namespace kernscope::readers::ncu
