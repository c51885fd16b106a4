// GPU state sampled on a thread of its own through NVML: clocks, power, temperature, utilization,
// memory used, clock-event (throttle) reasons, optionally PCIe throughput. libnvidia-ml.so.1 is
// opened at run time, so nothing links against it; where it is missing the sampler says why and
// tracing goes on without samples.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

// The NVML entry points used, as a table of functions (the real library, or a fake in tests).
// Signatures follow nvml.h: every call returns 0 (NVML_SUCCESS) on success.
struct NvmlApi {
  struct Utilization {
    unsigned gpu, memory;
  };
  struct Memory {
    unsigned long long total, free, used;
  };
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*device_count)(unsigned*) = nullptr;
  int (*device_handle)(unsigned, void**) = nullptr;
  int (*device_uuid)(void*, char*, unsigned) = nullptr;
  int (*clock_info)(void*, int, unsigned*) = nullptr;  // type 1: SM, 2: memory (MHz)
  int (*power_usage)(void*, unsigned*) = nullptr;      // milliwatts
  int (*temperature)(void*, int, unsigned*) = nullptr; // sensor 0: GPU
  int (*utilization)(void*, Utilization*) = nullptr;
  int (*memory_info)(void*, Memory*) = nullptr;
  int (*clock_event_reasons)(void*, unsigned long long*) = nullptr;
  int (*pcie_throughput)(void*, int, unsigned*) = nullptr;  // counter 0: TX, 1: RX (KB/s; takes 20 ms)
};

// Opens libnvidia-ml.so.1; nullopt with the reason when it cannot.
std::optional<NvmlApi> load_nvml(std::string& why);

class NvmlSampler {
 public:
  using Clock = std::function<std::int64_t()>;  // the trace's timestamps (cuptiGetTimestamp)

  NvmlSampler(NvmlApi api, Clock clock, int interval_ms, bool pcie);
  ~NvmlSampler();

  // Initializes NVML and finds the devices; false (with why()) when NVML does not work.
  bool start();
  void stop();
  // One sample of every device (the thread calls this every interval while active).
  void sample_once();
  // Samples only while active: a paused tracer (--paused, sampled windows) keeps no sample from
  // outside its windows, so the thread sleeps between them instead of calling NVML every interval
  // for rows that would be thrown away. Active from construction unless told otherwise.
  void set_active(bool active);
  // Moves the samples taken so far into `out`.
  void drain(std::vector<GpuSampleRow>& out);
  const std::string& why() const { return why_; }
  // NVML's device UUIDs ("GPU-..."), by NVML index, to map samples onto CUDA device ids.
  const std::vector<std::string>& uuids() const { return uuids_; }

 private:
  NvmlApi api_;
  Clock clock_;
  int interval_ms_;
  bool pcie_;
  std::vector<void*> devices_;
  std::vector<std::string> uuids_;
  std::string why_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool active_ = true;
  bool initialized_ = false;
  std::vector<GpuSampleRow> samples_;
  std::thread thread_;
};

}  // namespace kernscope::tracer
