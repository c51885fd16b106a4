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
inline constexpr const char* kThreadCpuUs = "KERNSCOPE_THREAD_CPU_US";
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
inline constexpr const char* kPaused = "KERNSCOPE_PAUSED";
inline constexpr const char* kSession = "KERNSCOPE_SESSION";
inline constexpr const char* kEveryS = "KERNSCOPE_EVERY_S";
inline constexpr const char* kForS = "KERNSCOPE_FOR_S";
inline constexpr const char* kEverySteps = "KERNSCOPE_EVERY_STEPS";
inline constexpr const char* kSteps = "KERNSCOPE_STEPS";
inline constexpr const char* kKeepLastSteps = "KERNSCOPE_KEEP_LAST_STEPS";
inline constexpr const char* kWhen = "KERNSCOPE_WHEN";
inline constexpr const char* kStepRange = "KERNSCOPE_STEP_RANGE";
inline constexpr const char* kTailMb = "KERNSCOPE_TAIL_MB";
// 0: keep CUPTI attached between windows even where it could be detached (the A/B's other side).
inline constexpr const char* kPausedDetach = "KERNSCOPE_PAUSED_DETACH";
inline constexpr const char* kSample = "KERNSCOPE_SAMPLE";  // also read by the Python hook (kernscope_host.py)
}  // namespace env

using Ns = std::int64_t;

// Live capture: when the tracer records, set by record --paused, --every/--for,
// --every-steps/--steps, --keep-last-steps/--when (capture_schedule.hpp decides from it).
struct CaptureSettings {
  bool paused = false;              // --paused: recording off until asked
  Ns every_ns = 0, for_ns = 0;      // --every S --for S
  std::int64_t every_steps = 0;     // --every-steps N
  std::int64_t steps = 0;           // --steps M (with --every-steps)
  std::int64_t keep_last_steps = 0; // --keep-last-steps N (tail capture)
  double when_factor = 0;           // --when 'step > Fx p50'
  Ns when_ns = 0;                   // --when 'step > T' (absolute)
  bool live() const { return paused || every_ns > 0 || every_steps > 0 || keep_last_steps > 0; }
  bool tail() const { return keep_last_steps > 0; }
  bool sampled() const { return every_ns > 0 || every_steps > 0; }
  // What the trace says of how it was recorded ("windows on request", "sampled: 1 s every 60 s", ...).
  std::string describe() const;
};

using kernscope::kRecordKinds;  // the kinds `record --record` can choose (injection.cpp enables them in this order)

struct TracerConfig {
  std::string output = "kernscope-%p.sqlite";  // %p pid, %h host, %n sequence, %q{VAR} environment
  bool graph_nodes = true;                     // false: one record per whole CUDA graph execution
  bool api_all = false;                        // every runtime/driver call, not only launch/copy/alloc/sync
  int nvml_interval_ms = 10;                   // 0: no GPU samples
  bool nvml_pcie = false;                      // PCIe throughput (each query takes NVML 20 ms)
  int thread_cpu_interval_us = 1000;           // the launching threads' CPU clocks read this often; 0: not read
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
  CaptureSettings live;                        // live capture; live.live() false: the usual recording
  std::string session;                         // KERNSCOPE_SESSION: the control socket's session folder (live capture)
  std::string step_range;                      // KERNSCOPE_STEP_RANGE: NVTX ranges that are steps; "auto": engine step names
  std::size_t tail_bytes = std::size_t{512} << 20;  // KERNSCOPE_TAIL_MB: tail capture's bound on held records
  bool paused_detach = true;                   // KERNSCOPE_PAUSED_DETACH: detach CUPTI between windows where possible
  bool records_kind(std::string_view kind) const { return record.empty() ? default_record_kind(kind) : record.contains(kind); }
};

// "2x p50", "step > 2x p50", "50ms", "step > 0.05s" -> (factor, absolute ns); one of them is 0.
Result<std::pair<double, Ns>> parse_tail_condition(std::string_view text);

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

// Whether a paused tracer detaches CUPTI between windows, and why not when it does not
// (cupti_attachment.hpp has why detaching is worth it). Here, beside the options it reads, so that
// `record` tells the user the same thing the tracer will do.
struct DetachChoice {
  bool detach = false;
  std::string why;  // "detached between windows" or what keeps CUPTI attached
};
DetachChoice choose_paused_detach(const TracerConfig& config);

}  // namespace kernscope::tracer
