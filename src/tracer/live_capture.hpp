// Live capture in one traced process, without CUPTI: the injected tracer gives it a clock
// and the switch that turns CUPTI's recording on and off, tells it of step ranges and hands it the
// decoded records; the GPU-free tests give it their own (tests/unit/live_capture_test.cpp). It owns
// the control socket `kernscope capture` talks to, the window schedule (--paused, --every,
// --every-steps) and tail capture (--keep-last-steps: records held in memory, written as a window
// when a step is slow).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <atomic>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracer/capture_schedule.hpp"
#include "tracer/config/control_channel.hpp"
#include "tracer/config/tracer_config.hpp"
#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

class LiveCapture {
 public:
  struct Hooks {
    std::function<Ns()> now;                                     // the records' clock
    std::function<void(bool on, const std::string& why)> record;  // switch recording (and log the window)
    std::function<bool()> recording;
  };
  LiveCapture(const TracerConfig& config, std::int64_t pid, Hooks hooks);
  ~LiveCapture();

  // Listens for `kernscope capture` at `socket_path`; the error says why it cannot. Timed windows
  // run on that thread; without a socket, call run_timer() so they still do.
  Result<void> listen(const std::string& socket_path);
  void run_timer();
  // Stops answering (the program is ending) and closes an open window.
  void finish();

  // A step range began or ended on a program thread (the tracer decides which ranges are steps).
  void on_step(bool started);
  std::string request(const ControlRequest& request);
  // Runs due switches of timed windows; the nanoseconds until the next one, negative for none.
  std::int64_t tick();

  // Tail capture: the collector hands every decoded batch here instead of writing it (device rows
  // stay in the batch, to be written at once).
  bool holds_records() const { return held_ != nullptr; }
  void hold(RecordBatch& batch);
  // The next window of a slow step, once due (or now when `forced`), as a batch to write with its
  // KERNSCOPE_CAPTURE_WINDOWS row; `flush` first adds whatever records are still on their way. Call
  // until it returns nothing.
  std::optional<RecordBatch> due_window(bool forced, const std::function<void(RecordBatch&)>& flush);
  // Forgets held records no window can need any more.
  void forget_old();

  // Rows for KERNSCOPE_TRACER_INFO.
  std::vector<std::pair<std::string, std::string>> info() const;
  bool watches_steps() const { return !config_.step_range.empty(); }
  const CaptureSettings& settings() const { return config_.live; }

 private:
  // Makes the switches decided at `decided`; a window's end moves by the time its start took.
  void apply(const std::vector<CaptureSwitch>& switches, Ns decided);
  struct PendingTail {
    Ns from = 0, end = 0, due = 0;
    std::string why;
  };

  TracerConfig config_;
  std::int64_t pid_;
  Hooks hooks_;
  // Orders the control thread, program threads and the collector. Timed: finish() may run on a
  // signal's thread while a program thread holds it (switching CUPTI), and must not wait forever.
  mutable std::timed_mutex mutex_;
  std::atomic<bool> finished_{false};
  std::thread timer_;  // timed windows when there is no control socket
  std::unique_ptr<CaptureSchedule> schedule_;
  std::unique_ptr<TailTrigger> tail_;
  std::unique_ptr<HeldRecords> held_;  // the collector's only
  std::deque<PendingTail> pending_;  // slow steps' windows not yet written, oldest first
  std::int64_t tail_windows_ = 0;
  Ns last_written_end_ = 0;
  std::unique_ptr<ControlServer> control_;
};

}  // namespace kernscope::tracer
