// Small helpers of the injected tracer: its messages, CUPTI's error names, the API calls recorded by
// default, the devices' records, the host it names in the trace.
#include "tracer/injection/tracer.hpp"

namespace kernscope::tracer {


void say(const std::string& line) { std::fprintf(stderr, "kernscope tracer: %s\n", line.c_str()); }

const char* cupti_error(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "unknown CUPTI error";
}

// The runtime and driver calls recorded by default: what launches, copies, allocates or waits.
bool default_api(const char* name) {
  static const char* const kPrefixes[] = {
      "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset", "cudaMalloc", "cudaFree", "cudaHostAlloc",
      "cudaHostRegister", "cudaHostUnregister", "cudaDeviceSynchronize", "cudaStreamSynchronize",
      "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaEventRecord", "cudaEventQuery", "cudaStreamQuery",
      "cudaProfilerStart", "cudaProfilerStop", "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuMemAlloc",
      "cuMemFree", "cuMemHostAlloc", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
      "cuStreamWaitEvent", "cuEventRecord", "cuProfilerStart", "cuProfilerStop"};
  for (const char* p : kPrefixes) {
    if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
  }
  return false;
}


void enable_device_records() {
  // cuptiActivityEnableAndDump also hands over the records of devices CUDA already knows; where it is refused,
  // the kind is switched on as before (records of devices started from then on).
  if (cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE) != CUPTI_SUCCESS) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
}

std::string cupti_api_version() {
  uint32_t version = 0;
  return cuptiGetVersion(&version) == CUPTI_SUCCESS ? std::to_string(version) : "unknown";
}

// The CPU model and how many CPUs this process may run on: the host the cost estimate names.
std::string host_cpu() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string model = "unknown CPU";
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 1);
      model.erase(0, model.find_first_not_of(' '));
      break;
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  return model + (cpus > 0 ? ", " + std::to_string(cpus) + " CPUs" : std::string());
}

}  // namespace kernscope::tracer
