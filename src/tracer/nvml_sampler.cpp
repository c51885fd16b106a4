#include "tracer/nvml_sampler.hpp"
#include "base/thread_name.hpp"
#include "tracer/sampling_loop.hpp"

#include <dlfcn.h>

#include <chrono>

namespace kernscope::tracer {

std::optional<NvmlApi> load_nvml(std::string& why) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "libnvidia-ml.so.1 not found: no GPU samples (clocks, power, temperature)";
    return std::nullopt;
  }
  NvmlApi api;
  auto bind = [&](auto& slot, const char* name, const char* fallback = nullptr) {
    void* f = dlsym(lib, name);
    if (!f && fallback) f = dlsym(lib, fallback);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(f);
    return f != nullptr;
  };
  bool ok = bind(api.init, "nvmlInit_v2") && bind(api.shutdown, "nvmlShutdown") &&
            bind(api.device_count, "nvmlDeviceGetCount_v2") && bind(api.device_handle, "nvmlDeviceGetHandleByIndex_v2");
  if (!ok) {
    why = "libnvidia-ml.so.1 lacks nvmlInit_v2 / device enumeration: no GPU samples";
    return std::nullopt;
  }
  // Optional entry points: a missing one leaves its column at -1.
  bind(api.device_uuid, "nvmlDeviceGetUUID");
  bind(api.clock_info, "nvmlDeviceGetClockInfo");
  bind(api.power_usage, "nvmlDeviceGetPowerUsage");
  bind(api.temperature, "nvmlDeviceGetTemperature");
  bind(api.utilization, "nvmlDeviceGetUtilizationRates");
  bind(api.memory_info, "nvmlDeviceGetMemoryInfo");
  bind(api.clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
  bind(api.pcie_throughput, "nvmlDeviceGetPcieThroughput");
  return api;
}

NvmlSampler::NvmlSampler(NvmlApi api, Clock clock, int interval_ms, bool pcie)
    : api_(api), clock_(std::move(clock)), interval_ms_(interval_ms), pcie_(pcie) {}

NvmlSampler::~NvmlSampler() { stop(); }

bool NvmlSampler::start() {
  if (api_.init() != 0) {
    why_ = "nvmlInit failed: no GPU samples";
    return false;
  }
  initialized_ = true;
  unsigned count = 0;
  if (api_.device_count(&count) != 0 || count == 0) {
    why_ = "NVML sees no devices: no GPU samples";
    return false;
  }
  for (unsigned i = 0; i < count; ++i) {
    void* handle = nullptr;
    if (api_.device_handle(i, &handle) != 0) continue;
    devices_.push_back(handle);
    char uuid[96] = {0};
    if (api_.device_uuid && api_.device_uuid(handle, uuid, sizeof uuid) == 0) uuids_.emplace_back(uuid);
    else uuids_.emplace_back();
  }
  if (interval_ms_ > 0) {
    thread_ = std::thread([this] {
      name_this_thread("ks-nvml");
      run_sampling_loop(mutex_, wake_, stopping_, active_, std::chrono::milliseconds(interval_ms_), [this] { sample_once(); });
    });
  }
  return true;
}

void NvmlSampler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (initialized_) {
    api_.shutdown();
    initialized_ = false;
  }
}

void NvmlSampler::set_active(bool active) {
  {
    std::lock_guard lock(mutex_);
    active_ = active;
  }
  wake_.notify_all();
}

void NvmlSampler::sample_once() {
  std::vector<GpuSampleRow> rows;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    void* d = devices_[i];
    GpuSampleRow r;
    r.timestamp = clock_();
    r.device = static_cast<std::uint32_t>(i);
    unsigned v = 0;
    if (api_.clock_info && api_.clock_info(d, 1, &v) == 0) r.sm_clock_mhz = static_cast<std::int32_t>(v);
    if (api_.clock_info && api_.clock_info(d, 2, &v) == 0) r.mem_clock_mhz = static_cast<std::int32_t>(v);
    if (api_.power_usage && api_.power_usage(d, &v) == 0) r.power_mw = v;
    if (api_.temperature && api_.temperature(d, 0, &v) == 0) r.temperature_c = static_cast<std::int32_t>(v);
    NvmlApi::Utilization u{};
    if (api_.utilization && api_.utilization(d, &u) == 0) {
      r.gpu_util = static_cast<std::int32_t>(u.gpu);
      r.mem_util = static_cast<std::int32_t>(u.memory);
    }
    NvmlApi::Memory m{};
    if (api_.memory_info && api_.memory_info(d, &m) == 0) r.mem_used_bytes = static_cast<std::int64_t>(m.used);
    unsigned long long reasons = 0;
    if (api_.clock_event_reasons && api_.clock_event_reasons(d, &reasons) == 0) r.clock_event_reasons = reasons;
    if (pcie_ && api_.pcie_throughput) {
      if (api_.pcie_throughput(d, 0, &v) == 0) r.pcie_tx_kbps = v;
      if (api_.pcie_throughput(d, 1, &v) == 0) r.pcie_rx_kbps = v;
    }
    rows.push_back(r);
  }
  std::lock_guard lock(mutex_);
  samples_.insert(samples_.end(), rows.begin(), rows.end());
}

void NvmlSampler::drain(std::vector<GpuSampleRow>& out) {
  std::lock_guard lock(mutex_);
  out.insert(out.end(), samples_.begin(), samples_.end());
  samples_.clear();
}

}  // namespace kernscope::tracer
