// The program's end: the last records flushed and decoded, the trace's remaining rows and its
// KERNSCOPE_TRACER_INFO written.
#include "tracer/injection/tracer.hpp"

namespace kernscope::tracer {

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
  if (thread_cpu_) thread_cpu_->stop();
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
  if (thread_cpu_) thread_cpu_->drain(rest.thread_cpu);
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
      {"thread_cpu_interval_us", std::to_string(config_.thread_cpu_interval_us)},
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

}  // namespace kernscope::tracer
