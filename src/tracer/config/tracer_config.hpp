// The tracer's settings, passed from `kernscope record` to the injected library through
// KERNSCOPE_* environment variables (the only channel into an arbitrary program).
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string_view>
#include <functional>
#include <string>

#include "kernscope/error.hpp"
#include "base/record_kinds.hpp"

namespace kernscope::tracer {

// The variables that carry `kernscope record`'s options into the traced program: named once, here,
// for `record` (which sets them) and the injected library (which reads them).
namespace env {
inline constexpr const char* kOutput = "KERNSCOPE_OUTPUT";
inline constexpr const char* kApi = "KERNSCOPE_API";
inline constexpr const char* kCudaGraphTrace = "KERNSCOPE_CUDA_GRAPH_TRACE";
inline constexpr const char* kNvmlIntervalMs = "KERNSCOPE_NVML_INTERVAL_MS";
inline constexpr const char* kNvmlPcie = "KERNSCOPE_NVML_PCIE";
inline constexpr const char* kHwTrace = "KERNSCOPE_HW_TRACE";
inline constexpr const char* kCaptureRange = "KERNSCOPE_CAPTURE_RANGE";
inline constexpr const char* kCaptureRangeEnd = "KERNSCOPE_CAPTURE_RANGE_END";
inline constexpr const char* kDelayS = "KERNSCOPE_DELAY_S";
inline constexpr const char* kDurationS = "KERNSCOPE_DURATION_S";
inline constexpr const char* kBufferMb = "KERNSCOPE_BUFFER_MB";
inline constexpr const char* kBuffers = "KERNSCOPE_BUFFERS";
inline constexpr const char* kFlushMs = "KERNSCOPE_FLUSH_MS";
inline constexpr const char* kFileList = "KERNSCOPE_FILE_LIST";
inline constexpr const char* kRecord = "KERNSCOPE_RECORD";
inline constexpr const char* kTracerPath = "KERNSCOPE_TRACER_PATH";
inline constexpr const char* kTracerLib = "KERNSCOPE_TRACER_LIB";
inline constexpr const char* kSample = "KERNSCOPE_SAMPLE";  // also read by the Python hook (kernscope_host.py)
}  // namespace env

using kernscope::kRecordKinds;  // the kinds `record --record` can choose (injection.cpp enables them in this order)

struct TracerConfig {
  std::string output = "kernscope-%p.sqlite";  // %p pid, %h host, %n sequence, %q{VAR} environment
  bool graph_nodes = true;                     // false: one record per whole CUDA graph execution
  bool api_all = false;                        // every runtime/driver call, not only launch/copy/alloc/sync
  int nvml_interval_ms = 10;                   // 0: no GPU samples
  bool nvml_pcie = false;                      // PCIe throughput (each query takes NVML 20 ms)
  bool hw_trace = false;                       // kernel timestamps from the GPU's hardware events (Blackwell)
  enum class Capture { kAll, kProfilerApi, kNvtx } capture = Capture::kAll;
  std::string nvtx_range;                      // --capture-range=nvtx:NAME[@DOMAIN]
  std::string nvtx_domain;                     // empty: the default domain
  bool capture_repeat = false;                 // --capture-range-end=repeat[:N]
  int capture_ranges = 1;                      // ranges to record (0: unlimited with repeat)
  double delay_s = 0, duration_s = 0;          // 0 duration: until the end
  std::size_t buffer_bytes = 8u << 20;
  std::size_t buffers = 32;                    // preallocated; when all are full, records are dropped (counted)
  int flush_ms = 100;                          // CUPTI's periodic flush; 0: only when a buffer is full
  std::string file_list;                       // where to append the written file's path (for `record`)
  double sample_hz = 0;                        // KERNSCOPE_SAMPLE cpu[:HZ]: native stacks of a non-Python program; 0 none
  // Kinds to record (KERNSCOPE_RECORD, comma-separated names of kRecordKinds, or "all"); empty: the
  // default kinds (kDefaultRecordKinds: all but sync).
  std::set<std::string, std::less<>> record;
  bool records_kind(std::string_view kind) const { return record.empty() ? default_record_kind(kind) : record.contains(kind); }
};

// Reads KERNSCOPE_* variables through `getenv`; errors name the variable.
Result<TracerConfig> config_from_env(const std::function<const char*(const char*)>& getenv);

// KERNSCOPE_SAMPLE / `record --sample`: "none" or "" -> 0, "cpu" -> 100, "cpu:HZ" -> HZ (1..1000).
Result<double> parse_sample_rate(std::string_view text);

// "stop", "repeat", "repeat:N" -> (repeat, ranges).
Result<std::pair<bool, int>> parse_capture_end(const std::string& text);

// Expands %p, %h, %n and %q{VAR}; %n is the smallest number >= 1 for which `exists` is false.
std::string expand_output_path(const std::string& pattern, std::int64_t pid, const std::string& host,
                               const std::function<const char*(const char*)>& getenv,
                               const std::function<bool(const std::string&)>& exists);

}  // namespace kernscope::tracer
