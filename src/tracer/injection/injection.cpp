// The injected tracer: CUDA loads this library through CUDA_INJECTION64_PATH and calls
// InitializeInjection() when the program initializes CUDA. It turns on CUPTI's activity records,
// hands CUPTI buffers from a preallocated pool, decodes completed buffers on a collector thread
// and appends them to an SQLite file with Nsight Systems' schema; NVML samples run on their own
// thread. The program is never stopped or crashed by the tracer: every failure becomes one line
// on stderr and tracing stops, the program goes on.
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_name.hpp"
#include "base/version.hpp"
#include "tracer/activity_decoder.hpp"
#include "tracer/buffer_pool.hpp"
#include "tracer/capture_schedule.hpp"
#include "tracer/cupti_attachment.hpp"
#include "tracer/config/control_channel.hpp"
#include "tracer/live_capture.hpp"
#include "model/step_names.hpp"
#include "tracer/config/file_list.hpp"
#include "tracer/native_recording.hpp"
#include "tracer/nvml_sampler.hpp"
#include "tracer/self_cost.hpp"
#include "tracer/termination_flush.hpp"
#include "tracer/trace_db_writer.hpp"
#include "tracer/config/tracer_config.hpp"

namespace kernscope::tracer {
namespace {

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

std::atomic<bool> g_started{false};

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
}  // init succeeded in this process (not in a forked child)

// How long a SIGTERM/SIGINT/SIGHUP waits for the trace to be written before the program dies.
constexpr std::chrono::milliseconds kTerminationBound{5000};

class Tracer {
 public:
  static Tracer& get() {
    static Tracer* tracer = new Tracer;  // never destroyed: CUPTI may call back during exit
    return *tracer;
  }

  bool init();
  void finish();

  static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
  static void CUPTIAPI on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  // Subscribes on_callback once (CUPTI takes one subscriber per process); says why not and returns
  // false when another subscriber holds CUPTI.
  bool subscribe(const char* what);
  void enable_hw_trace();

 private:
  // Recording on or off; with CUPTI detached while paused (cupti_attachment.hpp), through the
  // attachment, which attaches first. False when recording could not start.
  bool set_activities(bool on, const std::string& why = {});
  void switch_recording(bool on, const std::string& why);
  std::string attach_cupti();
  std::string detach_cupti();
  // Waits (at most 2 s) until the collector has decoded every buffer handed back so far.
  void wait_until_decoded();
  void finalize_on_api_exit();
  void finalize_with(CUpti_SubscriberHandle subscriber);
  // The records' clock: CUPTI's, or CLOCK_REALTIME plus the offset measured at start where CUPTI is
  // detached while paused (a CUPTI call would attach it again).
  std::int64_t now_ns();
  void start_live();
  void watch_steps(CUpti_CallbackId cbid, const CUpti_NvtxData* data);
  // A range an NVTX call pushes: its ASCII text (nullptr: none, or not ASCII) and its domain's name
  // ("" the default); nullopt for a call that pushes no range.
  struct NvtxPush {
    const char* text = nullptr;
    std::string domain;
  };
  std::optional<NvtxPush> pushed_range(CUpti_CallbackId cbid, const CUpti_NvtxData* data);
  bool is_step_range(const char* text, const std::string& domain);
  void decode_queued(RecordBatch& batch);
  void write_tail_window(bool forced);
  void write(RecordBatch& batch);
  std::string recorded_kinds() const;
  void find_default_api();
  void switch_default_api(bool on);
  void keep_recorded_windows(RecordBatch& batch);
  void collect();
  void range_started();
  void range_ended();
  void on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data);

  TracerConfig config_;
  std::unique_ptr<BufferPool> pool_;
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::pair<uint8_t*, size_t>> completed_;
  // Buffers with records that cuptiFinalize handed back: not decoded while CUPTI is detached (a CUPTI
  // call would attach it again), but at the next attach, before its new correlation epoch, or at the end.
  std::deque<std::pair<uint8_t*, size_t>> held_after_finalize_;
  bool stopping_ = false;
  std::thread collector_;
  std::thread timer_;

  StringPool strings_;
  std::unique_ptr<ActivityDecoder> decoder_;
  std::unique_ptr<TraceDbWriter> writer_;
  std::unique_ptr<NvmlSampler> sampler_;
  NativeRecording native_;  // --sample cpu on a program that is not Python
  std::string path_;
  std::string nvml_note_;
  std::string kernel_timestamps_ = "software (CUPTI instrumentation)";  // or hardware events (--hw-trace)
  std::mutex kernel_timestamps_mutex_;  // set on the program's thread that creates the first context
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<bool> active_{false};
  std::atomic<bool> finished_{false};
  std::atomic<int> ranges_done_{0};
  std::int64_t kernels_ = 0, graph_execs_ = 0, api_calls_ = 0, unknown_ = 0;
  // Records of what the program did (kernels, copies, sets, graphs, API calls, syncs, NVTX): a
  // process with none leaves no file.
  std::int64_t activity_ = 0;
  SelfCost cost_;  // the tracer's own time on threads it does not own (self_cost.hpp)
  double timing_cost_ns_ = 0;
  std::set<std::uint32_t> threads_;
  std::string write_error_;
  CUpti_SubscriberHandle subscriber_ = nullptr;  // CUPTI allows one per process: shared (subscribe())
  bool hw_trace_tried_ = false;                  // --hw-trace: asked for at the first context creation
  // Runtime [0] and driver [1] callback ids of the calls recorded by default.
  std::vector<CUpti_CallbackId> default_cbids_[2];
  bool records_always_ = false;    // recording starts with the program and never stops
  std::mutex window_mutex_;
  WindowLog windows_{false};  // the recordings; rows for the trace unless the whole run is one (init)
  // Correlation ids of the launch calls recorded lately (window_mutex_; the collector's batches).
  static constexpr std::size_t kLaunchesRemembered = 1 << 20;
  std::unordered_set<std::uint32_t> launched_in_window_;
  std::deque<std::uint32_t> launch_order_;
  std::mutex domain_mutex_;
  std::mutex capture_mutex_;
  std::vector<NvtxRow> capture_open_, capture_rows_;  // the NVTX capture range's own instances
  StringId capture_text_ = kNoString, capture_domain_ = kNoString;
  std::map<nvtxDomainHandle_t, std::string> domain_names_;

  // Live capture (issue 30: live_capture.hpp): --paused, --every, --every-steps, --keep-last-steps.
  std::unique_ptr<LiveCapture> live_;
  bool watch_steps_ = false;
  std::atomic<int> step_depth_{0};  // the nesting level of step ranges that count (the innermost seen)
  std::int64_t run_start_ns_ = 0;

  // Paused with CUPTI detached (cupti_attachment.hpp): null where CUPTI stays attached.
  DetachChoice detach_choice_;
  // Never deleted: at the program's end its thread may still be inside a detach that waits on a
  // program thread (CuptiAttachment::finish), and the process ends anyway.
  CuptiAttachment* attachment_ = nullptr;
  std::string attachment_end_;  // said in KERNSCOPE_TRACER_INFO when a detach was under way at the end
  std::int64_t clock_offset_ns_ = 0;  // cuptiGetTimestamp - CLOCK_REALTIME, at start
  std::string cupti_version_ = "unknown";
  std::atomic<int> decoding_{0};      // buffers the collector has taken and not yet given back
  // cuptiFinalize on a program thread at its next API exit (NVIDIA's way to detach while the
  // program runs: no program thread is then inside CUPTI on its behalf).
  std::atomic<bool> finalize_pending_{false};
  std::mutex finalize_mutex_;
  std::condition_variable finalize_cv_;
  std::optional<CUptiResult> finalized_;
  std::atomic<int> finalized_on_api_exit_{0}, finalized_here_{0};
  bool debug_detach_ = false;  // KERNSCOPE_DEBUG_DETACH=1: a line per attach and detach
  std::atomic<bool> devices_seen_{false};  // a DEVICE record was decoded (the collector)
  bool finalize_on_thread_ = false;  // KERNSCOPE_DETACH_FINALIZE=thread: cuptiFinalize on the tracer's thread
  std::atomic<bool> finalizing_{false};
};

// Every way the trace gets written (exit, a terminating signal, os._exit through
// kernscope_tracer_finish) goes through here: a process whose tracer never started, or a child
// forked from a traced one (which has a copy of the tracer but not its threads), writes nothing.
void finish_if_started() {
  if (g_started) Tracer::get().finish();
}

void CUPTIAPI Tracer::buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Tracer& t = get();
  ScopedCost timed(&t.cost_, CostSite::kBufferRequest);
  *buffer = t.pool_->take();  // nullptr when all buffers are in use: CUPTI drops and counts
  *size = *buffer ? t.config_.buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI Tracer::buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  (void)size;
  Tracer& t = get();
  ScopedCost timed(&t.cost_, CostSite::kBufferComplete);
  size_t dropped = 0;
  // Not while cuptiFinalize hands buffers back: no CUPTI call inside its teardown.
  if (!t.finalizing_ && cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) t.dropped_ += dropped;
  if (!buffer) return;
  {
    std::lock_guard lock(t.queue_mutex_);
    (t.finalizing_ && valid > 0 ? t.held_after_finalize_ : t.completed_).emplace_back(buffer, valid);
  }
  t.queue_cv_.notify_one();
}

// Decodes every buffer CUPTI has handed back so far.
void Tracer::decode_queued(RecordBatch& batch) {
  while (true) {
    std::pair<uint8_t*, size_t> item{nullptr, 0};
    {
      std::lock_guard lock(queue_mutex_);
      if (completed_.empty()) return;
      item = completed_.front();
      completed_.pop_front();
      ++decoding_;  // with the pop, so that a detach waiting for the queue sees it
    }
    CUpti_Activity* record = nullptr;
    // An empty buffer (a detach's flush hands those back) needs no CUPTI call.
    while (item.second > 0 && cuptiActivityGetNextRecord(item.first, item.second, &record) == CUPTI_SUCCESS) decoder_->decode(record, batch);
    if (!batch.devices.empty()) devices_seen_ = true;
    pool_->give_back(item.first);
    --decoding_;
  }
}

void Tracer::write(RecordBatch& batch) {
  if (batch.empty()) return;
  kernels_ += static_cast<std::int64_t>(batch.kernels.size());
  graph_execs_ += static_cast<std::int64_t>(batch.graph_traces.size());
  api_calls_ += static_cast<std::int64_t>(batch.api_calls.size());
  unknown_ += batch.unknown_records;
  activity_ += static_cast<std::int64_t>(batch.kernels.size() + batch.memcpys.size() + batch.memsets.size() +
                                         batch.graph_traces.size() + batch.api_calls.size() + batch.syncs.size() +
                                         batch.nvtx.size());
  for (const auto& a : batch.api_calls) threads_.insert(a.tid);
  if (writer_ && write_error_.empty()) {
    if (auto r = writer_->append(batch, strings_); !r) {
      write_error_ = r.error().message;
      say("cannot write the trace, tracing stops: " + write_error_);
    }
  }
  batch.clear();
}

// Tail capture: a slow step's window, once due (LiveCapture decides), with the records CUPTI still
// held flushed first.
void Tracer::write_tail_window(bool forced) {
  while (auto window = live_->due_window(forced, [this, forced](RecordBatch& late) {
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    decode_queued(late);
  })) {
    write(*window);
  }
}

void Tracer::collect() {
  RecordBatch batch;
  while (true) {
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait_for(lock, std::chrono::milliseconds(200),
                         [&] { return !completed_.empty() || stopping_; });
      if (completed_.empty() && stopping_) break;
    }
    decode_queued(batch);
    if (sampler_) sampler_->drain(batch.samples);
    keep_recorded_windows(batch);
    {
      std::lock_guard lock(window_mutex_);
      batch.windows = windows_.take_rows();
    }
    if (live_ && live_->holds_records()) {
      // Tail capture: everything but device rows is held until a slow step.
      live_->hold(batch);
      write(batch);
      write_tail_window(false);
      live_->forget_old();
      continue;
    }
    write(batch);
  }
}

// The recorded kinds in kRecordKinds' order, with how API calls were chosen: "kernel,...,overhead
// api:default" (the defaults record every kind).
std::string Tracer::recorded_kinds() const {
  std::string kinds;
  for (const auto kind : kRecordKinds) {
    if (config_.records_kind(kind)) kinds += (kinds.empty() ? "" : ",") + std::string(kind);
  }
  return kinds + (config_.api_all ? " api:all" : " api:default");
}

std::int64_t Tracer::now_ns() {
  // Decided before any of the tracer's threads starts (attachment_ is set later in init).
  if (detach_choice_.detach) return realtime_ns() + clock_offset_ns_;
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  return static_cast<std::int64_t>(now);
}

bool Tracer::set_activities(bool on, const std::string& why) {
  if (!attachment_) {
    switch_recording(on, why);
    return true;
  }
  if (on) return attachment_->start_recording(why);
  attachment_->stop_recording(why);
  return true;
}

// CUPTI attached again for a window: what init set up, undone by cuptiFinalize. The recorded kinds
// are switched on after this (switch_recording).
std::string Tracer::attach_cupti() {
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  uint8_t zeroed = 1;
  size_t zeroed_size = sizeof zeroed;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed);
  {
    // Records cuptiFinalize handed back belong to the last window: decoded now, in its epoch.
    std::lock_guard lock(queue_mutex_);
    completed_.insert(completed_.end(), held_after_finalize_.begin(), held_after_finalize_.end());
    held_after_finalize_.clear();
  }
  wait_until_decoded();
  {
    // Buffers the last cuptiFinalize kept (neither free, queued nor being decoded) never come back.
    std::lock_guard lock(queue_mutex_);
    const std::size_t out = pool_->size() - pool_->free_count() - completed_.size() - static_cast<std::size_t>(decoding_.load());
    if (out > 0 && out <= pool_->size()) pool_->replace(out);
  }
  decoder_->new_epoch();  // CUPTI numbers correlations from 1 again
  const CUptiResult r = cuptiActivityRegisterCallbacks(&Tracer::buffer_requested, &Tracer::buffer_completed);
  if (r != CUPTI_SUCCESS) return std::string("registering the buffers: ") + cupti_error(r);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);  // the devices again (the writer keeps each once)
  cuptiActivityFlushPeriod(static_cast<uint32_t>(config_.flush_ms));
  if (debug_detach_) say("attached");
  return {};
}

// Records flushed and decoded first (a CUPTI call on the collector after the finalize would attach
// CUPTI again), then cuptiFinalize on the next program thread that leaves a CUDA call, or here when
// the program makes none within 200 ms (it is idle: nothing races the finalize).
void Tracer::wait_until_decoded() {
  queue_cv_.notify_all();
  for (int i = 0; i < 2000; ++i) {  // at most 2 s: the collector decodes a full pool in well under that
    {
      std::lock_guard lock(queue_mutex_);
      if (completed_.empty() && decoding_ == 0) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string Tracer::detach_cupti() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  wait_until_decoded();
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult sub = cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(&Tracer::on_callback), this);
  {
    std::lock_guard lock(finalize_mutex_);
    finalized_.reset();
    subscriber_ = sub == CUPTI_SUCCESS ? subscriber : nullptr;
  }
  if (sub == CUPTI_SUCCESS && !finalize_on_thread_) {
    finalize_pending_ = true;
    // The runtime call's exit, not the driver's (as Kineto detaches): a driver call runs inside a
    // runtime call, whose own callback comes after. The first build, finalizing at any API exit,
    // corrupted the heap on an H200; it changed together with the hand-back below, so which one
    // mended it is not known (bench/RESULTS.md).
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    std::unique_lock lock(finalize_mutex_);
    finalize_cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return finalized_.has_value(); });
  }
  if (finalize_pending_.exchange(false) || sub != CUPTI_SUCCESS || finalize_on_thread_) {
    ++finalized_here_;
    finalize_with(subscriber);
  }
  // A program thread that took the finalize may still be inside it.
  std::unique_lock lock(finalize_mutex_);
  finalize_cv_.wait(lock, [this] { return finalized_.has_value(); });
  subscriber_ = nullptr;
  if (debug_detach_) {
    say("detached (" + std::to_string(finalized_on_api_exit_.load()) + " on a program thread's API exit, " +
        std::to_string(finalized_here_.load()) + " on the tracer's thread so far): " + cupti_error(*finalized_));
  }
  return *finalized_ == CUPTI_SUCCESS ? std::string() : std::string("cuptiFinalize: ") + cupti_error(*finalized_);
}

// On a program thread, at a CUDA call's exit, while a detach waits (detach_cupti).
void Tracer::finalize_on_api_exit() {
  if (!finalize_pending_.exchange(false)) return;
  CUpti_SubscriberHandle subscriber = nullptr;
  {
    std::lock_guard lock(finalize_mutex_);
    subscriber = subscriber_;
  }
  ++finalized_on_api_exit_;
  finalize_with(subscriber);
}

// The detach itself, on whichever thread took it: `subscriber` (the detach's own) unsubscribed, then
// cuptiFinalize, its result handed to detach_cupti's wait.
void Tracer::finalize_with(CUpti_SubscriberHandle subscriber) {
  if (subscriber) cuptiUnsubscribe(subscriber);
  finalizing_ = true;
  const CUptiResult r = cuptiFinalize();
  finalizing_ = false;
  {
    std::lock_guard lock(finalize_mutex_);
    finalized_ = r;
  }
  finalize_cv_.notify_all();
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

// NVTX capture ranges: each thread keeps a stack of its open ranges, marking the ones that match
// the capture range, so the matching pop ends the capture even with ranges nested inside.
void Tracer::on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  thread_local std::vector<bool> stack;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto* p = static_cast<const nvtxDomainCreateA_params*>(data->functionParams);
      const auto* handle = static_cast<const nvtxDomainHandle_t*>(data->functionReturnValue);
      if (p && p->name && handle) {
        std::lock_guard lock(domain_mutex_);
        domain_names_[*handle] = p->name;
      }
      return;
    }
    default:
      break;
  }
  // Watched for a capture range only (live capture watches steps in watch_steps).
  if (config_.capture != TracerConfig::Capture::kNvtx) return;
  if (const auto push = pushed_range(cbid, data)) {
    stack.push_back(push->text && push->domain == config_.nvtx_domain && config_.nvtx_range == push->text);
  } else switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      if (!stack.empty()) {
        const bool was_capture = stack.back();
        stack.pop_back();
        if (was_capture) {
          // The capturing range itself began before recording did: written from our own stamps.
          uint64_t now = 0;
          cuptiGetTimestamp(&now);
          std::lock_guard lock(capture_mutex_);
          if (!capture_open_.empty()) {
            NvtxRow row = capture_open_.back();
            capture_open_.pop_back();
            row.end = static_cast<std::int64_t>(now);
            row.end_tid = row.tid;
            if (active_) capture_rows_.push_back(row);
          }
          range_ended();
        }
      }
      return;
    default:
      return;
  }
  if (stack.back()) {
    const bool was_active = active_;
    range_started();
    if (active_ && !was_active) {
      uint64_t now = 0;
      cuptiGetTimestamp(&now);
      NvtxRow row;
      row.start = static_cast<std::int64_t>(now);
      row.pid = static_cast<std::uint32_t>(getpid());
      row.tid = static_cast<std::uint32_t>(gettid());
      std::lock_guard lock(capture_mutex_);
      row.text = capture_text_;
      row.domain = capture_domain_;
      capture_open_.push_back(row);
    }
  }
}

std::optional<Tracer::NvtxPush> Tracer::pushed_range(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  const auto ascii = [](const nvtxEventAttributes_t* a) {
    return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : nullptr;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const auto* p = static_cast<const nvtxRangePushA_params*>(data->functionParams);
      return NvtxPush{p ? p->message : nullptr, {}};
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx: {
      const auto* p = static_cast<const nvtxRangePushEx_params*>(data->functionParams);
      return NvtxPush{p ? ascii(p->eventAttrib) : nullptr, {}};
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams);
      NvtxPush push{p ? ascii(p->core.eventAttrib) : nullptr, {}};
      if (p) {
        std::lock_guard lock(domain_mutex_);
        if (auto it = domain_names_.find(p->domain); it != domain_names_.end()) push.domain = it->second;
      }
      return push;
    }
    default:
      return std::nullopt;
  }
}

// Live capture by steps: a step range is the one --step-range names (NAME or NAME@DOMAIN), or with
// "auto" a range whose name is an engine's or PyTorch's step name (model/step_names.hpp). Nested
// step ranges count at the innermost level seen, as `kernscope steps` counts them.
bool Tracer::is_step_range(const char* text, const std::string& domain) {
  if (!text) return false;
  if (config_.step_range != "auto") {
    return config_.step_range == text || (!domain.empty() && config_.step_range == std::string(text) + "@" + domain);
  }
  // Names repeat (one per step): each is decided once per thread.
  thread_local std::map<std::string, bool, std::less<>> decided;
  const std::string_view name(text);
  if (auto it = decided.find(name); it != decided.end()) return it->second;
  const bool step = step_name_phase(name).has_value();
  if (decided.size() >= 4096) decided.clear();  // names unique per step (vLLM's): start over, bounded
  decided.emplace(std::string(name), step);
  return step;
}

void Tracer::watch_steps(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  if (!g_started) return;  // a child forked without exec: its copy of the tracer has no threads
  thread_local std::vector<int> stack;  // per open range: -1, or the step's nesting level
  auto push = [&](bool step) {
    int level = -1;
    if (step) {
      level = static_cast<int>(std::count_if(stack.begin(), stack.end(), [](int l) { return l >= 0; }));
      int deepest = step_depth_.load();
      while (level > deepest && !step_depth_.compare_exchange_weak(deepest, level)) {
      }
    }
    stack.push_back(level);
    if (level >= 0 && level == step_depth_.load()) live_->on_step(true);
  };
  if (const auto pushed = pushed_range(cbid, data)) {
    push(is_step_range(pushed->text, pushed->domain));
    return;
  }
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      if (stack.empty()) return;
      if (const int level = stack.back(); level >= 0 && level == step_depth_.load()) {
        stack.pop_back();
        live_->on_step(false);
        return;
      }
      stack.pop_back();
      return;
    default:
      return;
  }
}

// Live capture's set-up: the schedule or the tail trigger (LiveCapture), the step watch, the
// control socket in the session's folder.
void Tracer::start_live() {
  LiveCapture::Hooks hooks;
  hooks.now = [this] { return now_ns(); };
  hooks.record = [this](bool on, const std::string& why) { set_activities(on, why); };
  hooks.recording = [this] { return active_.load(); };
  live_ = std::make_unique<LiveCapture>(config_, getpid(), hooks);
  watch_steps_ = live_->watches_steps();
  if (watch_steps_ && subscribe("cannot watch NVTX step ranges")) cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_NVTX);
  const std::string session = config_.session.empty() ? std::to_string(getpid()) : config_.session;
  const auto getenv = [](const char* n) { return std::getenv(n); };
  if (auto r = live_->listen(control_socket_path(session_dir(session, getenv), getpid())); !r) {
    say("live capture cannot be controlled from outside: " + r.error().message +
        (config_.live.sampled() ? "; sampled windows still open on their own" : ""));
    live_->run_timer();
  }
}

void CUPTIAPI Tracer::on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* t = static_cast<Tracer*>(self);
  if (t->detach_choice_.detach && (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)) {
    // Subscribed only while a detach waits for a program thread to leave a CUDA call.
    if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_EXIT) t->finalize_on_api_exit();
    return;
  }
  ScopedCost timed(&t->cost_, domain == CUPTI_CB_DOMAIN_NVTX ? CostSite::kNvtxCallback : CostSite::kApiCallback);
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    t->on_nvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
    if (t->watch_steps_) t->watch_steps(cbid, static_cast<const CUpti_NvtxData*>(data));
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) t->enable_hw_trace();
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  const bool start = (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
                     (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
  // Start after the call returns, stop before it runs: the range holds only the work between.
  if (start && info->callbackSite == CUPTI_API_EXIT) t->range_started();
  if (!start && info->callbackSite == CUPTI_API_ENTER) t->range_ended();
}

bool Tracer::subscribe(const char* what) {
  if (subscriber_) return true;
  const CUptiResult r = cuptiSubscribe(&subscriber_, reinterpret_cast<CUpti_CallbackFunc>(&Tracer::on_callback), this);
  if (r == CUPTI_SUCCESS) return true;
  subscriber_ = nullptr;
  say(std::string(what) + " (CUPTI already has a subscriber): " + cupti_error(r) + "; not tracing");
  return false;
}

void Tracer::enable_hw_trace() {
  std::lock_guard lock(kernel_timestamps_mutex_);
  if (hw_trace_tried_) return;  // the first context decides; later ones share the setting
  hw_trace_tried_ = true;
  const CUptiResult hw = cuptiActivityEnableHWTrace(1);
  kernel_timestamps_ = hw == CUPTI_SUCCESS ? "hardware events (CUPTI HW trace)"
                                           : std::string("software (--hw-trace refused by CUPTI: ") + cupti_error(hw) + ")";
  if (hw != CUPTI_SUCCESS) say("--hw-trace: " + kernel_timestamps_);
}

bool Tracer::init() {
  TerminationSignalsBlocked blocked;  // inherited by the collector, sampler and timer threads
  // Set-up runs inside the program's first CUDA call (cuInit): its time is the program's too.
  ScopedCost timed(&cost_, CostSite::kInit);
  timing_cost_ns_ = SelfCost::timing_cost_ns();
  auto config = config_from_env([](const char* name) { return std::getenv(name); });
  if (!config) {
    say(config.error().message + "; not tracing");
    return false;
  }
  config_ = *config;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  path_ = expand_output_path(
      config_.output, getpid(), host, [](const char* name) { return std::getenv(name); },
      [](const std::string& p) { return access(p.c_str(), F_OK) == 0; });
  auto writer = TraceDbWriter::create(path_, static_cast<std::uint32_t>(getpid()));
  if (!writer) {
    say(writer.error().message + "; not tracing");
    return false;
  }
  writer_ = std::move(*writer);
  // Listed now, not at exit: a program killed by a signal never reaches the exit handler, and
  // its file still holds every batch committed before.
  if (!config_.file_list.empty()) {
    std::ofstream list(config_.file_list, std::ios::app);
    list << path_ << "\n";
  }
  decoder_ = std::make_unique<ActivityDecoder>(strings_, [](bool driver, std::uint32_t cbid) {
    const char* name = nullptr;
    cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name);
    return std::string(name ? name : "unknown API " + std::to_string(cbid));
  });
  pool_ = std::make_unique<BufferPool>(config_.buffers, config_.buffer_bytes);

  // NVTX must reach the CUPTI copy this library is bound to: a process can hold two (PyTorch
  // wheels ship their own libcupti), and `record` can only guess the path. NVTX reads the variable
  // at its first call, which in most programs comes after CUDA starts (ranges before are lost).
  Dl_info cupti_info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &cupti_info) && cupti_info.dli_fname) {
    setenv("NVTX_INJECTION64_PATH", cupti_info.dli_fname, 1);
  }
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  // The pool hands out zeroed buffers (see BufferPool), so CUPTI need not zero them in the launch path.
  uint8_t zeroed = 1;
  size_t zeroed_size = sizeof zeroed;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed);
  CUptiResult r = cuptiActivityRegisterCallbacks(&Tracer::buffer_requested, &Tracer::buffer_completed);
  if (r != CUPTI_SUCCESS) {
    say(std::string("CUPTI is not available (another profiler such as nsys or the PyTorch profiler may hold it): ") +
        cupti_error(r) + "; not tracing");
    return false;
  }
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);  // device properties, once per device
  if (config_.hw_trace) {
    // Kernel timestamps from the GPU's hardware event system instead of CUPTI's instrumentation of
    // each launch (Blackwell only; CUPTI refuses elsewhere, and then the usual timestamps are taken).
    // CUPTI takes it only once the driver is initialized, which it is not yet here (this runs inside
    // cuInit: asked here, CUPTI answered NOT_INITIALIZED on an H200): it is asked for when the first
    // context is created, before any kernel can run.
    if (!subscribe("cannot wait for the first CUDA context to enable --hw-trace")) return false;
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  find_default_api();
  cupti_version_ = cupti_api_version();
  detach_choice_ = choose_paused_detach(config_);
  if (detach_choice_.detach) {
    debug_detach_ = std::getenv("KERNSCOPE_DEBUG_DETACH") != nullptr;
    const char* where = std::getenv("KERNSCOPE_DETACH_FINALIZE");
    finalize_on_thread_ = where && std::string(where) == "thread";
    // Found on an H200 (CUPTI 13.0): calls switched on one by one after CUPTI was attached again
    // give no records (the quirk noted at switch_default_api), so windows record the RUNTIME and
    // DRIVER kinds whole: every call inside a window, each window's calls costing more than one by
    // one. KERNSCOPE_DETACH_API=call keeps the per-call switching (to check the quirk again).
    const char* api = std::getenv("KERNSCOPE_DETACH_API");
    if (!config_.api_all && !(api && std::string(api) == "call")) config_.api_all = true;
  }
  {
    uint64_t now = 0;
    cuptiGetTimestamp(&now);
    run_start_ns_ = static_cast<std::int64_t>(now);
    clock_offset_ns_ = run_start_ns_ - realtime_ns();
  }
  // Tail capture records all along and keeps what it writes to its windows; --paused and sampling
  // record in windows only.
  records_always_ = config_.capture == TracerConfig::Capture::kAll && config_.delay_s <= 0 && config_.duration_s <= 0 &&
                    (!config_.live.live() || config_.live.tail());
  windows_ = WindowLog(!records_always_);
  if (!config_.api_all) {
    switch_default_api(true);
    if (!records_always_) switch_default_api(false);  // each recording switches them on again
  }
  if (!config_.graph_nodes && config_.records_kind("kernel")) {
    // One record per whole graph: CUPTI then stops itemizing graph nodes (eager kernels are still
    // recorded one by one), which removes the per-node timestamp cost.
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    if (r != CUPTI_SUCCESS) say(std::string("cannot trace whole CUDA graphs, graph nodes are itemized instead: ") + cupti_error(r));
  }
  cuptiActivityFlushPeriod(static_cast<uint32_t>(config_.flush_ms));

  // The GPU sampler exists before any window can open (the timer thread and the capture callbacks
  // below open them), so set_activities can wake it.
  if (config_.nvml_interval_ms > 0) {
    std::string why;
    if (auto api = load_nvml(why)) {
      sampler_ = std::make_unique<NvmlSampler>(*api, [this] { return now_ns(); }, config_.nvml_interval_ms, config_.nvml_pcie);
      // Sleeps until the first window where recording waits for one (see set_activities).
      sampler_->set_active(records_always_);
      if (!sampler_->start()) {
        nvml_note_ = sampler_->why();
        sampler_.reset();
      }
    } else {
      nvml_note_ = why;
    }
    if (!nvml_note_.empty()) say(nvml_note_);
  }

  if (config_.capture == TracerConfig::Capture::kProfilerApi) {
    if (!subscribe("cannot watch cudaProfilerStart/Stop")) return false;
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  } else if (config_.capture == TracerConfig::Capture::kNvtx) {
    if (!subscribe("cannot watch NVTX ranges")) return false;
    cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_NVTX);
    capture_text_ = strings_.intern(config_.nvtx_range);  // before the collector thread starts
    if (!config_.nvtx_domain.empty()) capture_domain_ = strings_.intern(config_.nvtx_domain);
  } else if (config_.delay_s > 0 || config_.duration_s > 0) {
    timer_ = std::thread([this] {
      name_this_thread("ks-delay");
      std::this_thread::sleep_for(std::chrono::duration<double>(config_.delay_s));
      if (finished_) return;
      set_activities(true);
      if (config_.duration_s > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(config_.duration_s));
        if (!finished_) set_activities(false);
      }
    });
    timer_.detach();
  } else if (!config_.live.live() || config_.live.tail()) {
    set_activities(true);
  }  // --paused, --every, --every-steps: recording starts with the first window

  // Native stacks from here on (the program's first CUDA call); Python programs are sampled by
  // kernscope's Python hook instead.
  native_.start(config_.sample_hz);
  if (!native_.why_not().empty()) say("native stacks not sampled: " + native_.why_not());
  if (detach_choice_.detach) {
    // Before start_live, whose control thread may open a window at once. Detached once the set-up's
    // first records (the devices) had time to arrive; a window's records a grace after it closes.
    CuptiAttachment::Ops ops;
    ops.attach = [this] { return attach_cupti(); };
    ops.detach = [this] { return detach_cupti(); };
    ops.record = [this](bool on, const std::string& why) { switch_recording(on, why); };
    ops.say = [](const std::string& line) { say(line); };
    // The devices' records come once (at the first context), and not again when CUPTI is attached
    // anew (seen on an H200: none after 7 re-attaches with the DEVICE kind enabled): the first
    // detach waits for them, flushing so that they arrive, for at most a minute.
    const auto ready_from = std::chrono::steady_clock::now();
    ops.ready = [this, ready_from] {
      if (devices_seen_ || std::chrono::steady_clock::now() - ready_from > std::chrono::minutes(1)) return true;
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      return false;
    };
    attachment_ = new CuptiAttachment(std::chrono::milliseconds(std::max(2 * config_.flush_ms, 100)), std::move(ops));
    attachment_->detach_later();
  }
  if (config_.live.live()) start_live();  // before the collector, which reads live_
  collector_ = std::thread([this] {
    name_this_thread("ks-collector");
    collect();
  });
  std::atexit(finish_if_started);
  finish_on_termination(finish_if_started, kTerminationBound);
  // A child forked without exec holds a copy of this tracer, without its threads, and shares its
  // file: it must not write or wait for the collector (a join that never returns). CUDA cannot be
  // used in such a child anyway; one that execs is traced anew through the environment.
  pthread_atfork(nullptr, nullptr, [] { g_started = false; });
  return true;
}

void Tracer::finish() {
  if (finished_.exchange(true)) return;
  const std::int64_t finish_start = monotonic_ns();
  native_.stop();  // first: the finish's own work is not the program's
  // No request is answered once the program ends; an open window closes here.
  if (live_) live_->finish();
  // Detached, CUPTI holds nothing (the detach flushed), and a call would attach it again.
  const CuptiAttachment::End end = attachment_ ? attachment_->finish() : CuptiAttachment::End::kAttached;
  if (end == CuptiAttachment::End::kDetachUnderWay) {
    attachment_end_ = "a detach was under way at the program's end (its records flushed before it; the trace written without waiting for it)";
  }
  if (end == CuptiAttachment::End::kAttached) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (sampler_) sampler_->stop();
  {
    std::lock_guard lock(queue_mutex_);
    // The last window's records cuptiFinalize handed back: decoded with the rest (the program ends).
    completed_.insert(completed_.end(), held_after_finalize_.begin(), held_after_finalize_.end());
    held_after_finalize_.clear();
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (collector_.joinable()) collector_.join();
  // Tail capture: a slow step's window not yet written is written now, with what has arrived.
  if (live_ && live_->holds_records()) write_tail_window(true);
  RecordBatch rest;
  {
    std::lock_guard lock(window_mutex_);
    rest.windows = windows_.take_rows();
  }
  decoder_->flush_open_ranges(rest);
  {
    std::lock_guard lock(capture_mutex_);
    rest.nvtx.insert(rest.nvtx.end(), capture_rows_.begin(), capture_rows_.end());
  }
  if (sampler_) sampler_->drain(rest.samples);
  keep_recorded_windows(rest);
  if (live_ && live_->holds_records()) {
    // Tail capture: what is left belongs to no written window (ranges still open, last samples).
    RecordBatch devices;
    devices.devices = std::move(rest.devices);
    devices.windows = std::move(rest.windows);
    rest = std::move(devices);
  } else if (!records_always_) {
    std::lock_guard lock(window_mutex_);
    std::erase_if(rest.nvtx, [&](const NvtxRow& row) { return !windows_.contains(row.start); });
  }
  activity_ += static_cast<std::int64_t>(rest.nvtx.size());
  const std::string command = own_command();
  const std::int64_t run_end = now_ns();
  if (activity_ == 0 && writer_ && write_error_.empty()) {
    // CUDA started but the program did nothing with it (a torchrun parent, a compiler worker):
    // no file, and `record` lists the process as such.
    if (auto r = writer_->discard(); !r) say(r.error().message);
    writer_.reset();
    if (!config_.file_list.empty()) append_to_file_list(config_.file_list, empty_line(getpid(), path_, command));
    const std::string nothing = config_.live.tail()  ? "tail capture wrote no window (no step was slow enough: " + config_.live.describe() + ")"
                                : config_.live.live() ? "no capture window recorded GPU activity or CUDA calls"
                                                      : "no GPU activity and no CUDA calls recorded";
    say(nothing + " in process " + std::to_string(getpid()) + ": no file written" +
        (native_.samples() > 0 ? " (its " + std::to_string(native_.samples()) + " native stack samples are not kept)" : ""));
    return;
  }
  if (writer_ && write_error_.empty() && !rest.empty()) {
    if (auto r = writer_->append(rest, strings_); !r) write_error_ = r.error().message;
  }
  // Thread names from /proc, for the threads that made CUDA calls.
  std::vector<std::pair<std::uint32_t, std::string>> names;
  for (std::uint32_t tid : threads_) {
    std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
    std::string name;
    if (std::getline(comm, name)) names.emplace_back(tid, name);
  }
  std::string process;
  std::ifstream("/proc/self/comm") >> process;
  std::vector<std::pair<std::string, std::string>> info = {
      {"tracer", kVersionLine},
      {"dropped_records", std::to_string(dropped_.load())},
      {"unmapped_records", std::to_string(unknown_)},
      {"buffers_exhausted", std::to_string(pool_->exhausted())},
      {"api_records", config_.api_all ? "all" : "default"},
      {"cuda_graph_trace", config_.graph_nodes ? "node" : "graph"},
      {"capture_range", config_.capture == TracerConfig::Capture::kProfilerApi ? "cudaProfilerApi"
                        : config_.capture == TracerConfig::Capture::kNvtx     ? "nvtx:" + config_.nvtx_range
                                                                              : "none"},
      {"capture_ranges_recorded", std::to_string(ranges_done_.load())},
      // What the cost estimate (kernscope info/report, data/tracer_cost.tsv) is matched on.
      {"recorded_kinds", recorded_kinds()},
      {"nvml_interval_ms", std::to_string(config_.nvml_interval_ms)},
      {"cupti_api_version", cupti_version_},
      {"host_cpu", host_cpu()},
      {"command", command},
      // The tracer's own time (KERNSCOPE_TRACER_COST) is measured with two clock reads per timed
      // call; this is what one timing adds to the time it measures.
      {"timing_cost_ns", std::to_string(static_cast<std::int64_t>(timing_cost_ns_ + 0.5))}};
  if (!nvml_note_.empty()) info.emplace_back("nvml", nvml_note_);
  // What was recorded of the run: the reader says so beside every total of a windowed trace.
  info.emplace_back("run_start_ns", std::to_string(run_start_ns_));
  info.emplace_back("run_end_ns", std::to_string(run_end));
  if (live_) {
    for (auto& row : live_->info()) info.push_back(std::move(row));
    // How paused was paused: CUPTI detached between windows, or attached and why.
    if (attachment_) {
      for (auto& row : attachment_->info()) info.push_back(std::move(row));
      if (!attachment_end_.empty()) info.emplace_back("paused_cupti_end", attachment_end_);
      info.emplace_back("cupti_clock_offset_ns", std::to_string(clock_offset_ns_));
      info.emplace_back("cupti_finalized", std::to_string(finalized_on_api_exit_.load()) + " on a program thread's runtime API exit, " +
                                               std::to_string(finalized_here_.load()) + " on the tracer's thread (no CUDA call within 200 ms)");
    } else if (!config_.live.tail()) {
      info.emplace_back("paused_cupti", detach_choice_.why);
    }
  } else if (!records_always_) {
    info.emplace_back("capture", "recording windows (--delay/--duration or a capture range)");
  }
  {
    std::lock_guard lock(kernel_timestamps_mutex_);
    info.emplace_back("kernel_timestamps", kernel_timestamps_);
  }
  // Buffers CUPTI never handed back: another CUPTI client in the program (the PyTorch profiler)
  // registered its own callbacks and received them.
  const std::size_t missing = pool_->size() - pool_->free_count();
  info.emplace_back("buffers_free_at_end", std::to_string(pool_->free_count()) + " of " + std::to_string(pool_->size()));
  if (missing > 0 && attachment_) {
    // cuptiFinalize may keep buffers it was handed and had not filled: no other profiler.
    info.emplace_back("buffers_kept_by_cupti", std::to_string(missing));
  } else if (missing > 0) {
    info.emplace_back("cupti_taken_over", std::to_string(missing));
    say("another profiler in the program (e.g. torch.profiler) took over CUPTI; " + std::to_string(missing) +
        " buffers of records went to it, and the trace lacks them");
  }
  if (sampler_) {
    for (std::size_t i = 0; i < sampler_->uuids().size(); ++i) info.emplace_back("nvml_uuid_" + std::to_string(i), sampler_->uuids()[i]);
  }
  if (writer_ && write_error_.empty()) {
    // The finish's own time, up to here (flush, collector join, last batch); its last writes are
    // not in it.
    cost_.add(CostSite::kFinish, monotonic_ns() - finish_start);
    std::set<std::uint32_t> program_threads = threads_;
    program_threads.insert(static_cast<std::uint32_t>(getpid()));
    const auto cost_rows = cost_.rows();
    for (const auto& row : cost_rows) {
      // CUPTI calls API and NVTX callbacks on the thread making the call: the program's.
      if (row.site == CostSite::kApiCallback || row.site == CostSite::kNvtxCallback) program_threads.insert(row.tid);
    }
    if (auto r = writer_->write_cost(cost_rows, program_threads); !r) write_error_ = r.error().message;
  }
  if (writer_ && write_error_.empty()) {
    if (auto r = writer_->finish(info, process, names, strings_); !r) write_error_ = r.error().message;
  }
  writer_.reset();
  // The host tables go into the finished, self-contained file, as the Python hook's do.
  if (write_error_.empty()) {
    if (auto r = native_.write(path_, static_cast<std::uint32_t>(getpid()), process); !r) say(r.error().message);
  }
  if (write_error_.empty() && !config_.file_list.empty()) {
    append_to_file_list(config_.file_list, finished_line(getpid(), path_, command));
  }
  if (!write_error_.empty()) {
    say("the trace is incomplete: " + write_error_);
  } else {
    say("wrote " + path_ + ": " + std::to_string(kernels_) + " kernels, " +
        (graph_execs_ > 0 ? std::to_string(graph_execs_) + " whole-graph executions, " : std::string()) + std::to_string(api_calls_) +
        " API calls, " + std::to_string(dropped_.load()) + " records dropped");
  }
}

}  // namespace
}  // namespace kernscope::tracer

// Writes the trace now, as the exit handler would: for processes that end without running exit
// handlers (Python's multiprocessing workers end with os._exit; `record` makes os._exit call this).
// A no-op when tracing never started or already finished.
extern "C" __attribute__((visibility("default"))) void kernscope_tracer_finish(void) {
  kernscope::tracer::finish_if_started();
}

// The entry point CUDA calls for a library named in CUDA_INJECTION64_PATH.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] { kernscope::tracer::g_started = kernscope::tracer::Tracer::get().init(); });
  return 1;  // tracing or not, CUDA goes on
}
