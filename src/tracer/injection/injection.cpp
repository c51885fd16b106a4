// The injected tracer: CUDA loads this library through CUDA_INJECTION64_PATH and calls
// InitializeInjection() when the program initializes CUDA. It turns on CUPTI's activity records,
// hands CUPTI buffers from a preallocated pool, decodes completed buffers on a collector thread
// and appends them to an SQLite file with Nsight Systems' schema; NVML samples run on their own
// thread. The program is never stopped or crashed by the tracer: every failure becomes one line
// on stderr and tracing stops, the program goes on.
#include "tracer/injection/tracer.hpp"

namespace kernscope::tracer {

std::atomic<bool> g_started{false};

// How long a SIGTERM/SIGINT/SIGHUP waits for the trace to be written before the program dies.
constexpr std::chrono::milliseconds kTerminationBound{5000};

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
    if (thread_cpu_) {
      for (const auto& a : batch.api_calls) thread_cpu_->watch(a.tid);
      thread_cpu_->drain(batch.thread_cpu);
    }
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
  enable_device_records();  // device properties, once per device (written once each)
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
  if (config_.thread_cpu_interval_us > 0) {
    // The thread running this set-up is in its first CUDA call: the launching thread, watched from
    // now; threads that call CUDA later join as their calls are decoded.
    thread_cpu_ = std::make_unique<ThreadCpuSampler>([this] { return now_ns(); }, &ThreadCpuSampler::thread_cpu_ns,
                                                     config_.thread_cpu_interval_us);
    thread_cpu_->watch(static_cast<std::uint32_t>(syscall(SYS_gettid)));
    thread_cpu_->set_active(records_always_);
    thread_cpu_->start();
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
    // The devices' records come when CUDA starts; a CUPTI attached later gets them only by asking
    // for a dump (enable_device_records; with the kind merely enabled, none came after 7 re-attaches
    // on an H200). The first detach waits for them, flushing so that they arrive, for at most a minute.
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
