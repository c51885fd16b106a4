// The injected tracer's one object (Tracer) and what its parts share: injection.cpp starts it
// (InitializeInjection) and collects CUPTI's buffers; its other parts each have a file of their own
// (cupti_detach.cpp, recording_switch.cpp, nvtx_steps.cpp, trace_finish.cpp, tracer_support.cpp).
// Internal to libkernscope_tracer.so (hidden symbols).
#pragma once

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
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
#include "tracer/thread_cpu_sampler.hpp"
#include "tracer/self_cost.hpp"
#include "tracer/termination_flush.hpp"
#include "tracer/trace_db_writer.hpp"
#include "tracer/config/tracer_config.hpp"

namespace kernscope::tracer {

// One line on stderr, "kernscope tracer: ...".
void say(const std::string& line);
const char* cupti_error(CUptiResult r);
// The runtime and driver calls recorded by default: what launches, copies, allocates or waits.
bool default_api(const char* name);
std::string cupti_api_version();
// Switches on the devices' records and has CUPTI hand over those of devices CUDA already knows: a
// CUPTI attached after CUDA started (a re-attach for a window) otherwise gets none (seen on an H200).
void enable_device_records();
// The CPU model and how many CPUs this process may run on: the host the cost estimate names.
std::string host_cpu();
// init succeeded in this process (not in a forked child).
extern std::atomic<bool> g_started;

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
  std::unique_ptr<ThreadCpuSampler> thread_cpu_;  // whether the launching threads ran on a CPU between calls
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

  // Live capture (live_capture.hpp): --paused, --every, --every-steps, --keep-last-steps.
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


}  // namespace kernscope::tracer
