// Recording on and off: the activity kinds, the default API calls one by one, the window log, and
// the records kept to the windows.
#include "tracer/injection/tracer.hpp"

namespace kernscope::tracer {

// The recorded kinds in kRecordKinds' order, with how API calls were chosen: "kernel,...,overhead
// api:default" (the defaults record every kind).
std::string Tracer::recorded_kinds() const {
  std::string kinds;
  for (const auto kind : kRecordKinds) {
    if (config_.records_kind(kind)) kinds += (kinds.empty() ? "" : ",") + std::string(kind);
  }
  return kinds + (config_.api_all ? " api:all" : " api:default");
}

void Tracer::switch_recording(bool on, const std::string& why) {
  // In the order of kRecordKinds, whose names --record takes.
  static constexpr CUpti_ActivityKind kKinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
      CUPTI_ACTIVITY_KIND_MARKER,            CUPTI_ACTIVITY_KIND_OVERHEAD};
  static_assert(std::size(kKinds) == kRecordKinds.size());
  // The recording windows, for the records enabled once for the whole run (whole graphs) and the
  // trace's window rows: opened before the first kind is switched on, closed after the last is
  // switched off, so that every record made while a kind was on lies inside its window (on an
  // H200, launches made while the kinds were being switched off were recorded 5 us after a window's
  // end taken before).
  auto log_window = [&] {
    const std::int64_t now = now_ns();
    std::lock_guard lock(window_mutex_);
    const std::string by = !why.empty() ? why : config_.capture == TracerConfig::Capture::kAll ? "--delay/--duration" : "capture range";
    if (on) windows_.opened(static_cast<std::int64_t>(now), by);
    else windows_.closed(static_cast<std::int64_t>(now), by);
  };
  if (on) log_window();
  for (std::size_t i = 0; i < kRecordKinds.size(); ++i) {
    const CUpti_ActivityKind kind = kKinds[i];
    if (!config_.records_kind(kRecordKinds[i])) continue;
    const bool api_kind = kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER;
    if (api_kind && !config_.api_all) continue;  // default calls: one by one (switch_default_api)
    const CUptiResult r = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_NOT_COMPATIBLE && r != CUPTI_ERROR_INVALID_KIND) {
      say(std::string("cannot ") + (on ? "enable" : "disable") + " activity kind " + std::to_string(kind) + ": " + cupti_error(r));
    }
  }
  if (!config_.api_all && !records_always_) switch_default_api(on);
  if (!on) log_window();
  if (sampler_ && !records_always_) sampler_->set_active(on);
  if (thread_cpu_ && !records_always_) thread_cpu_->set_active(on);
  active_ = on;
}

// Default API records are enabled call by call, never through the RUNTIME/DRIVER kind: with the
// kind on, CUPTI intercepts every runtime call even when the other calls are then switched off, and
// PyTorch makes several bookkeeping calls per launch (eager Llama A/B on an H100: +11.7 % TPOT by
// kind, +6.2 % call by call, kernels included). Found on that H100 (CUPTI 2025.3.1): calls switched
// on first from a cudaProfilerStart callback or a timer thread produce no records, nor do they once
// every call was switched off; so all are switched on once at start, and between recordings all
// but the profiler calls are switched off.
void Tracer::switch_default_api(bool on) {
  for (bool driver : {false, true}) {
    if (!config_.records_kind(driver ? "driver" : "runtime")) continue;
    for (CUpti_CallbackId cbid : default_cbids_[driver]) {
      // The profiler calls stay on between recordings (rare calls, nsys records them too).
      const bool profiler_call = driver ? (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart || cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
                                        : (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
                                           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
      if (!on && profiler_call) continue;
      const uint8_t flag = on ? 1 : 0;
      const CUptiResult r = driver ? cuptiActivityEnableDriverApi(cbid, flag) : cuptiActivityEnableRuntimeApi(cbid, flag);
      if (r != CUPTI_SUCCESS) {
        say(std::string("cannot switch API records: ") + cupti_error(r));
        return;
      }
    }
  }
}

void Tracer::find_default_api() {
  for (bool driver : {false, true}) {
    const CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    const auto size = static_cast<CUpti_CallbackId>(driver ? static_cast<int>(CUPTI_DRIVER_TRACE_CBID_SIZE)
                                                           : static_cast<int>(CUPTI_RUNTIME_TRACE_CBID_SIZE));
    for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
      if (default_api(name)) default_cbids_[driver].push_back(cbid);
    }
  }
}

// Whole-graph records are enabled once for the whole run and kept to the recording windows here:
// enabling CUPTI's graph trace at a cudaProfilerStart, after graphs were instantiated, crashed the
// traced program on an H100 (CUDA 13.0, CUPTI 2025.3.1). GPU samples, taken all along, are kept
// to the windows too, so a windowed trace holds nothing from outside its windows.
void Tracer::keep_recorded_windows(RecordBatch& batch) {
  std::lock_guard lock(window_mutex_);
  // A graph replay belongs to the window its launch call was made in, as an eager kernel does:
  // the launch calls are recorded only inside windows, so a replay whose launch was recorded is
  // kept wherever it ran (the last replays of a window run after it closed). Without API records
  // (--record without runtime), by the replay's start.
  for (const auto& a : batch.api_calls) {
    launched_in_window_.insert(a.correlation);
    launch_order_.push_back(a.correlation);
  }
  while (launch_order_.size() > kLaunchesRemembered) {
    launched_in_window_.erase(launch_order_.front());
    launch_order_.pop_front();
  }
  const bool by_launch = config_.records_kind("runtime") || config_.records_kind("driver");
  std::erase_if(batch.graph_traces, [&](const GraphTraceRow& row) {
    return records_always_ ? !windows_.contains(row.start)
           : by_launch     ? !launched_in_window_.contains(row.correlation)
                           : !windows_.contains(row.start);
  });
  if (!records_always_) std::erase_if(batch.samples, [&](const GpuSampleRow& row) { return !windows_.contains(row.timestamp); });
  if (!records_always_) std::erase_if(batch.thread_cpu, [&](const ThreadCpuRow& row) { return !windows_.contains(row.start); });
}

void Tracer::range_started() {
  if (config_.capture_ranges > 0 && ranges_done_ >= config_.capture_ranges) return;
  if (!active_) set_activities(true);
}

void Tracer::range_ended() {
  if (!active_) return;
  set_activities(false);
  ++ranges_done_;
}

}  // namespace kernscope::tracer
