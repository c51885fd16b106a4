// When a live capture records: the decisions, apart from CUPTI and threads, so the GPU-free
// tests drive them with their own clock and steps.
//  - CaptureSchedule: windows opened and closed by `kernscope capture` requests (start, stop, a
//    window of a duration or of N steps) and by sampling (--every S --for S, --every-steps N
//    --steps M). Step windows open at the end of the step before their first and close at the
//    start of the step after their last, so every step inside is whole and recorded.
//  - TailTrigger: tail capture (--keep-last-steps N --when ...): which step is slow, and from when
//    the records must be kept so the last N steps can be written.
//  - HeldRecords: the records tail capture keeps in memory, bounded in bytes.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "tracer/config/control_channel.hpp"
#include "tracer/config/tracer_config.hpp"
#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

// A switch the tracer must make now: open (recording on) or close a window, with why.
struct CaptureSwitch {
  bool open = false;
  std::string why;  // "capture start", "every 60 s", "window of 20 steps", ...
};

class CaptureSchedule {
 public:
  // `steps_watched`: the tracer sees step starts and ends (record --step-range or sampling by steps).
  CaptureSchedule(const CaptureSettings& settings, bool steps_watched, Ns now);

  bool recording() const { return recording_; }
  // A request from `kernscope capture`; returns the reply line ("ok ..." / "error ...").
  std::string request(const ControlRequest& request, Ns now, std::vector<CaptureSwitch>& out);
  void step_started(Ns now, std::vector<CaptureSwitch>& out);
  void step_ended(Ns now, std::vector<CaptureSwitch>& out);
  // Switches due by `now` (timed windows, sampling by time).
  void tick(Ns now, std::vector<CaptureSwitch>& out);
  // The next time tick() has work, if any.
  std::optional<Ns> next_deadline() const;
  // The last switch on was decided at `decided` and began to record at `began` (a paused tracer
  // attaches CUPTI first, about 7 ms): a timed window's end moves as much later, so that it records
  // its whole duration.
  void recording_began(Ns decided, Ns began);
  std::int64_t steps_seen() const { return steps_ended_; }
  int windows_opened() const { return windows_; }

 private:
  void open(const std::string& why, std::vector<CaptureSwitch>& out);
  void close(const std::string& why, std::vector<CaptureSwitch>& out);

  CaptureSettings settings_;
  bool steps_watched_ = false;
  bool recording_ = false;
  int windows_ = 0;
  std::int64_t steps_ended_ = 0;
  std::int64_t steps_started_ = 0;
  // A window by steps: opens at the next step end (or now, between steps), closes at the start of
  // the step after `steps_left` more steps ended.
  bool step_window_pending_ = false;
  std::int64_t step_window_steps_ = 0;
  std::int64_t steps_left_ = -1;  // >= 0 while a step window records; 0: closes at the next step start
  std::string step_window_why_;
  bool in_step_ = false;
  std::optional<Ns> close_at_;     // a timed window's end
  std::optional<Ns> next_sample_;  // --every: the next window's start
};

class TailTrigger {
 public:
  // Steps slower than `factor` x the median of the last steps (at least kMinHistory of them), or
  // than `absolute` ns, trigger; the window holds the last `keep` steps (the slow one included).
  TailTrigger(std::int64_t keep, double factor, Ns absolute);
  static constexpr std::size_t kMinHistory = 8;
  static constexpr std::size_t kHistory = 1001;

  void step_started(Ns start);
  // A step ended: the start of the window to write when it is slow (the end of the step before
  // the kept ones, or the first kept step's start), else nullopt.
  std::optional<Ns> step_ended(Ns end);
  // Records that start before this are no longer needed.
  Ns keep_from() const;
  Ns last_duration() const { return last_duration_; }
  // The median step the trigger compares with (0 before kMinHistory steps).
  Ns median() const;
  std::string describe() const;

 private:
  std::int64_t keep_;
  double factor_;
  Ns absolute_;
  std::optional<Ns> open_start_;
  Ns last_duration_ = 0;
  std::deque<std::pair<Ns, Ns>> kept_;  // the last `keep_` steps' [start, end), plus the one before
  std::deque<Ns> durations_;            // the last kHistory durations
};

class HeldRecords {
 public:
  explicit HeldRecords(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  // Keeps a decoded batch (device rows are not held: the caller writes them at once).
  void add(RecordBatch& batch);
  // Forgets the rows that start before `t`.
  void drop_before(Ns t);
  // Moves out what was launched in [from, to): host rows that start in it and the GPU work their
  // launch calls started (by correlation id), wherever it ran; GPU rows launched before `from` go.
  RecordBatch take(Ns from, Ns to);
  std::size_t bytes() const { return bytes_; }
  // Rows forgotten because the bound was reached, and the time before which rows may be missing.
  std::int64_t overflow_rows() const { return overflow_rows_; }
  Ns complete_from() const { return complete_from_; }

 private:
  void recount();
  void shed();
  RecordBatch rows_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::int64_t overflow_rows_ = 0;
  Ns complete_from_ = 0;
};

// The recording windows of one process: where records are kept (graph executions and GPU samples
// are taken all along and kept to the windows) and the KERNSCOPE_CAPTURE_WINDOWS rows to write.
// Not thread-safe: the tracer holds its window lock around it.
class WindowLog {
 public:
  // `rows`: each window is also a row of the trace (false when the whole run is one window).
  explicit WindowLog(bool rows) : rows_(rows) {}
  void opened(Ns t, const std::string& why);
  void closed(Ns t, const std::string& why);
  bool contains(Ns t) const;
  bool any() const { return !windows_.empty(); }
  // The rows opened or closed since the last call.
  std::vector<CaptureWindowRow> take_rows();

 private:
  bool rows_;
  std::vector<std::pair<Ns, Ns>> windows_;  // [start, end), end INT64_MAX while open
  std::string opened_by_;
  std::vector<CaptureWindowRow> pending_;
};

}  // namespace kernscope::tracer
