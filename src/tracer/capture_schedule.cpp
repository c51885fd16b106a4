#include "tracer/capture_schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace kernscope::tracer {
namespace {

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

std::string factor_text(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", factor);
  return text;
}

}  // namespace

CaptureSchedule::CaptureSchedule(const CaptureSettings& settings, bool steps_watched, Ns now)
    : settings_(settings), steps_watched_(steps_watched) {
  // Sampling by time: the first window one period after the start, so set-up is not sampled.
  if (settings_.every_ns > 0) next_sample_ = now + settings_.every_ns;
}

void CaptureSchedule::open(const std::string& why, std::vector<CaptureSwitch>& out) {
  if (recording_) return;
  recording_ = true;
  ++windows_;
  out.push_back({true, why});
}

void CaptureSchedule::close(const std::string& why, std::vector<CaptureSwitch>& out) {
  step_window_pending_ = false;
  steps_left_ = -1;
  close_at_.reset();
  if (!recording_) return;
  recording_ = false;
  out.push_back({false, why});
}

std::string CaptureSchedule::request(const ControlRequest& r, Ns now, std::vector<CaptureSwitch>& out) {
  const std::string current = "window " + std::to_string(windows_);
  switch (r.kind) {
    case ControlRequest::Kind::kStatus:
      return std::string("ok ") + (recording_ ? "recording (" + current + ")" : step_window_pending_ ? "waiting for a step end" : "paused") +
             ", " + std::to_string(windows_) + " window(s) so far, " +
             (steps_watched_ ? std::to_string(steps_ended_) + " steps seen" : std::string("steps not watched"));
    case ControlRequest::Kind::kStart:
      if (recording_) return "ok already recording (" + current + ")";
      close_at_.reset();
      step_window_pending_ = false;  // a window of steps asked for and not yet open: start replaces it
      steps_left_ = -1;
      open("capture start", out);
      return "ok recording (window " + std::to_string(windows_) + ")";
    case ControlRequest::Kind::kStop:
      if (!recording_ && !step_window_pending_) return "ok not recording";
      if (!recording_) {
        close("capture stop", out);
        return "ok the pending step window is cancelled";
      }
      close("capture stop", out);
      return "ok stopped (" + current + ")";
    case ControlRequest::Kind::kWindow:
      if (recording_ || step_window_pending_) return "error a window is open (" + current + "): stop it first";
      if (r.steps > 0) {
        if (!steps_watched_) {
          return "error this process does not watch steps: start it with kernscope record --paused --step-range NAME (or auto)";
        }
        step_window_why_ = "window of " + std::to_string(r.steps) + " steps";
        step_window_steps_ = r.steps;
        if (!in_step_) {
          // Between steps: the next step to start is the window's first.
          open(step_window_why_, out);
          steps_left_ = r.steps;
          return "ok recording " + std::to_string(r.steps) + " steps (window " + std::to_string(windows_) + ")";
        }
        step_window_pending_ = true;
        return "ok recording " + std::to_string(r.steps) + " steps from the end of the current step (window " +
               std::to_string(windows_ + 1) + ")";
      }
      open("window of " + seconds_text(r.duration_s), out);
      close_at_ = now + static_cast<Ns>(r.duration_s * 1e9);
      return "ok recording for " + seconds_text(r.duration_s) + " (window " + std::to_string(windows_) + ")";
  }
  return "error unknown request";
}

void CaptureSchedule::step_started(Ns now, std::vector<CaptureSwitch>& out) {
  (void)now;
  in_step_ = true;
  ++steps_started_;
  // A step window whose steps have all ended closes before the next step runs.
  if (recording_ && steps_left_ == 0) close(step_window_why_ + " done", out);
}

void CaptureSchedule::step_ended(Ns now, std::vector<CaptureSwitch>& out) {
  (void)now;
  in_step_ = false;
  ++steps_ended_;
  if (recording_ && steps_left_ > 0) --steps_left_;
  if (step_window_pending_) {
    step_window_pending_ = false;
    open(step_window_why_, out);
    steps_left_ = step_window_steps_;
    return;
  }
  if (settings_.every_steps > 0 && !recording_ && steps_ended_ % settings_.every_steps == 0) {
    step_window_why_ = "every " + std::to_string(settings_.every_steps) + " steps";
    open(step_window_why_, out);
    steps_left_ = settings_.steps;
  }
}

void CaptureSchedule::tick(Ns now, std::vector<CaptureSwitch>& out) {
  if (close_at_ && now >= *close_at_) close(recording_ ? "window time over" : "", out);
  if (next_sample_ && now >= *next_sample_) {
    // A window a request opened meanwhile is left alone; the sample is skipped, not stacked.
    if (!recording_) {
      open("every " + seconds_text(static_cast<double>(settings_.every_ns) / 1e9), out);
      close_at_ = now + settings_.for_ns;
    }
    while (*next_sample_ <= now) *next_sample_ += settings_.every_ns;
  }
}

void CaptureSchedule::recording_began(Ns decided, Ns began) {
  if (recording_ && close_at_ && began > decided) *close_at_ += began - decided;
}

std::optional<Ns> CaptureSchedule::next_deadline() const {
  if (close_at_ && next_sample_) return std::min(*close_at_, *next_sample_);
  if (close_at_) return close_at_;
  return next_sample_;
}

TailTrigger::TailTrigger(std::int64_t keep, double factor, Ns absolute) : keep_(std::max<std::int64_t>(keep, 1)), factor_(factor), absolute_(absolute) {}

void TailTrigger::step_started(Ns start) { open_start_ = start; }

Ns TailTrigger::median() const {
  if (durations_.size() < kMinHistory) return 0;
  std::vector<Ns> sorted(durations_.begin(), durations_.end());
  const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), mid, sorted.end());
  return *mid;
}

std::optional<Ns> TailTrigger::step_ended(Ns end) {
  if (!open_start_) return std::nullopt;  // an end without its start (tracing began inside a step)
  const Ns start = *open_start_;
  open_start_.reset();
  const Ns duration = end - start;
  last_duration_ = duration;
  bool slow = false;
  if (absolute_ > 0) {
    slow = duration > absolute_;
  } else if (const Ns p50 = median(); p50 > 0) {
    slow = static_cast<double>(duration) > factor_ * static_cast<double>(p50);
  }
  kept_.emplace_back(start, end);
  // The kept steps and the one before them (its end is where the window starts).
  while (static_cast<std::int64_t>(kept_.size()) > keep_ + 1) kept_.pop_front();
  durations_.push_back(duration);
  if (durations_.size() > kHistory) durations_.pop_front();
  if (!slow) return std::nullopt;
  if (static_cast<std::int64_t>(kept_.size()) == keep_ + 1) return kept_.front().second;
  return kept_.front().first;  // fewer steps so far than asked: all of them
}

Ns TailTrigger::keep_from() const {
  if (kept_.empty()) return open_start_.value_or(0);
  // The window may start at the end of the step before the kept ones: keep from the start of the
  // oldest step held, which the next step end pushes out.
  return kept_.size() > static_cast<std::size_t>(keep_) ? kept_[1].first : kept_.front().first;
}

std::string TailTrigger::describe() const {
  return "keep " + std::to_string(keep_) + " steps, trigger " +
         (absolute_ > 0 ? seconds_text(static_cast<double>(absolute_) / 1e9) : factor_text(factor_) + "x median");
}

void WindowLog::opened(Ns t, const std::string& why) {
  if (!windows_.empty() && windows_.back().second == INT64_MAX) return;  // already open
  windows_.emplace_back(t, INT64_MAX);
  opened_by_ = why;
  if (rows_) pending_.push_back({static_cast<std::int64_t>(windows_.size()), t, -1, why, {}});
}

void WindowLog::closed(Ns t, const std::string& why) {
  if (windows_.empty() || windows_.back().second != INT64_MAX) return;  // none open
  windows_.back().second = t;
  if (rows_) pending_.push_back({static_cast<std::int64_t>(windows_.size()), windows_.back().first, t, opened_by_, why});
}

bool WindowLog::contains(Ns t) const {
  // Windows are in time order and do not overlap: the last one (where records arrive) first, else
  // the window that starts at or before t.
  if (windows_.empty()) return false;
  if (t >= windows_.back().first) return t < windows_.back().second;
  auto after = std::upper_bound(windows_.begin(), windows_.end(), t, [](Ns v, const auto& w) { return v < w.first; });
  return after != windows_.begin() && t < std::prev(after)->second;
}

std::vector<CaptureWindowRow> WindowLog::take_rows() {
  std::vector<CaptureWindowRow> rows;
  rows.swap(pending_);
  return rows;
}

namespace {

template <typename Row>
std::size_t erase_before(std::vector<Row>& rows, Ns t) {
  const std::size_t before = rows.size();
  std::erase_if(rows, [t](const Row& r) {
    if constexpr (requires { r.timestamp; }) return r.timestamp < t;
    else return r.start < t;
  });
  return before - rows.size();
}

template <typename Row>
void move_between(std::vector<Row>& from_rows, std::vector<Row>& to_rows, Ns from, Ns to) {
  for (auto& r : from_rows) {
    Ns t = 0;
    if constexpr (requires { r.timestamp; }) t = r.timestamp;
    else t = r.start;
    if (t >= from && t < to) to_rows.push_back(std::move(r));
  }
  erase_before(from_rows, to);
}

template <typename Row>
void append(std::vector<Row>& to, std::vector<Row>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  from.clear();
}

template <typename F>
void each_table(RecordBatch& a, RecordBatch& b, F&& f) {
  f(a.kernels, b.kernels);
  f(a.memcpys, b.memcpys);
  f(a.memsets, b.memsets);
  f(a.graph_traces, b.graph_traces);
  f(a.api_calls, b.api_calls);
  f(a.syncs, b.syncs);
  f(a.nvtx, b.nvtx);
  f(a.overheads, b.overheads);
  f(a.samples, b.samples);
  f(a.thread_cpu, b.thread_cpu);
}

}  // namespace

void HeldRecords::recount() {
  bytes_ = rows_.kernels.size() * sizeof(KernelRow) + rows_.memcpys.size() * sizeof(MemcpyRow) +
           rows_.memsets.size() * sizeof(MemsetRow) + rows_.graph_traces.size() * sizeof(GraphTraceRow) +
           rows_.api_calls.size() * sizeof(ApiRow) + rows_.syncs.size() * sizeof(SyncRow) + rows_.nvtx.size() * sizeof(NvtxRow) +
           rows_.overheads.size() * sizeof(OverheadRow) + rows_.samples.size() * sizeof(GpuSampleRow) +
           rows_.thread_cpu.size() * sizeof(ThreadCpuRow);
}

void HeldRecords::add(RecordBatch& batch) {
  each_table(rows_, batch, [](auto& held, auto& fresh) { append(held, fresh); });
  rows_.unknown_records += batch.unknown_records;
  batch.unknown_records = 0;
  recount();
  if (bytes_ > max_bytes_) shed();
}

// Over the bound: the oldest quarter of the held span goes, until under it; what went is counted and
// the time before which rows may be missing moves on (a window starting earlier is said incomplete).
void HeldRecords::shed() {
  while (bytes_ > max_bytes_) {
    Ns oldest = INT64_MAX, newest = INT64_MIN;
    RecordBatch empty;
    each_table(rows_, empty, [&](auto& rows, auto&) {
      for (const auto& r : rows) {
        Ns t = 0;
        if constexpr (requires { r.timestamp; }) t = r.timestamp;
        else t = r.start;
        oldest = std::min(oldest, t);
        newest = std::max(newest, t);
      }
    });
    if (oldest >= newest) {  // one instant holds it all: nothing sensible to keep
      std::size_t rows = 0;
      each_table(rows_, empty, [&](auto& r, auto&) { rows += r.size(); r.clear(); });
      overflow_rows_ += static_cast<std::int64_t>(rows);
      complete_from_ = std::max(complete_from_, newest + 1);
      recount();
      return;
    }
    const Ns cut = oldest + (newest - oldest) / 4 + 1;
    std::size_t gone = 0;
    each_table(rows_, empty, [&](auto& r, auto&) { gone += erase_before(r, cut); });
    overflow_rows_ += static_cast<std::int64_t>(gone);
    complete_from_ = std::max(complete_from_, cut);
    recount();
  }
}

void HeldRecords::drop_before(Ns t) {
  RecordBatch empty;
  each_table(rows_, empty, [&](auto& r, auto&) { erase_before(r, t); });
  recount();
}

// A window holds what was launched inside it, as recording a window live does: host rows (calls,
// ranges, samples) that start in it, and GPU work whose launch call is among them, even when it ran
// after the window's end; GPU work with no launch call held (the trace has no API rows) by its start.
RecordBatch HeldRecords::take(Ns from, Ns to) {
  RecordBatch out;
  move_between(rows_.api_calls, out.api_calls, from, to);
  move_between(rows_.nvtx, out.nvtx, from, to);
  move_between(rows_.overheads, out.overheads, from, to);
  move_between(rows_.samples, out.samples, from, to);
  move_between(rows_.thread_cpu, out.thread_cpu, from, to);
  std::unordered_set<std::uint32_t> launched;
  for (const auto& a : out.api_calls) launched.insert(a.correlation);
  const auto take_gpu = [&](auto& held, auto& taken) {
    std::erase_if(held, [&](auto& r) {
      const bool by_launch = !launched.empty() && r.correlation != 0 && launched.contains(r.correlation);
      const bool by_time = (launched.empty() || r.correlation == 0) && r.start >= from && r.start < to;
      if (by_launch || by_time) {
        taken.push_back(std::move(r));
        return true;
      }
      return r.start < from;  // launched before the window: no later window can want it
    });
  };
  take_gpu(rows_.kernels, out.kernels);
  take_gpu(rows_.memcpys, out.memcpys);
  take_gpu(rows_.memsets, out.memsets);
  take_gpu(rows_.graph_traces, out.graph_traces);
  take_gpu(rows_.syncs, out.syncs);
  recount();
  return out;
}

}  // namespace kernscope::tracer
