#include "tracer/live_capture.hpp"
#include "base/thread_name.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace kernscope::tracer {

LiveCapture::LiveCapture(const TracerConfig& config, std::int64_t pid, Hooks hooks)
    : config_(config), pid_(pid), hooks_(std::move(hooks)) {
  if (config_.live.tail()) {
    tail_ = std::make_unique<TailTrigger>(config_.live.keep_last_steps, config_.live.when_factor, config_.live.when_ns);
    held_ = std::make_unique<HeldRecords>(config_.tail_bytes);
  } else {
    schedule_ = std::make_unique<CaptureSchedule>(config_.live, watches_steps(), hooks_.now());
  }
}

LiveCapture::~LiveCapture() {
  if (control_) control_->stop();
  finished_ = true;
  if (timer_.joinable()) timer_.join();
}

void LiveCapture::run_timer() {
  if (!schedule_ || timer_.joinable()) return;
  timer_ = std::thread([this] {
    name_this_thread("ks-schedule");
    while (!finished_) {
      const std::int64_t wait_ns = tick();
      // At most 50 ms: finish() is noticed soon; a deadline is met to within that.
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns < 0 ? 50'000'000 : std::min<std::int64_t>(wait_ns + 1, 50'000'000)));
    }
  });
}

Result<void> LiveCapture::listen(const std::string& socket_path) {
  auto server = ControlServer::listen(
      socket_path, [this](const ControlRequest& r) { return request(r); }, [this] { return tick(); });
  if (!server) return std::unexpected(server.error());
  control_ = std::move(*server);
  return {};
}

void LiveCapture::finish() {
  if (control_) control_->stop();  // outside the lock: its thread may be waiting for it
  finished_ = true;
  if (timer_.joinable()) timer_.join();
  // A program thread may hold the lock while switching CUPTI, or be stopped holding it by the
  // signal that ends the program: the window is closed without it after a second.
  std::unique_lock lock(mutex_, std::chrono::seconds(1));
  if (schedule_ && hooks_.recording()) hooks_.record(false, "program ended");
}

// Switches are made at once, on the thread that decided them: a step window's edge is the step's
// own NVTX callback, so the steps inside are recorded whole.
void LiveCapture::apply(const std::vector<CaptureSwitch>& switches, Ns decided) {
  for (const auto& s : switches) {
    if (s.open == hooks_.recording()) continue;
    hooks_.record(s.open, s.why);
    if (s.open && schedule_) schedule_->recording_began(decided, hooks_.now());
  }
}

void LiveCapture::on_step(bool started) {
  if (finished_) return;
  const Ns t = hooks_.now();
  std::lock_guard lock(mutex_);
  if (finished_) return;
  if (schedule_) {
    std::vector<CaptureSwitch> switches;
    if (started) schedule_->step_started(t, switches);
    else schedule_->step_ended(t, switches);
    apply(switches, t);
    return;
  }
  if (started) {
    tail_->step_started(t);
    return;
  }
  const Ns median = tail_->median();
  const auto from = tail_->step_ended(t);
  if (!from) return;
  // The window ends with the slow step; it is written once its GPU work has had time to finish and
  // CUPTI to deliver its records (twice the flush period, at least 100 ms).
  const Ns grace = std::max<Ns>(2 * config_.flush_ms, 100) * 1'000'000;
  char why[160];
  std::snprintf(why, sizeof why, "a step of %.3f ms (%s %.3f ms)", static_cast<double>(tail_->last_duration()) / 1e6,
                config_.live.when_ns > 0 ? "threshold" : "median", static_cast<double>(config_.live.when_ns > 0 ? config_.live.when_ns : median) / 1e6);
  // A window never overlaps the one before (slow steps closer than N steps apart).
  const Ns start = pending_.empty() ? *from : std::max(*from, pending_.back().end);
  pending_.push_back(PendingTail{std::max(start, last_written_end_), t, t + grace, why});
}

std::string LiveCapture::request(const ControlRequest& r) {
  const Ns t = hooks_.now();
  std::lock_guard lock(mutex_);
  const std::string who = "pid " + std::to_string(pid_) + ": ";
  if (finished_) return "error " + who + "the program is ending";
  if (tail_) {
    if (r.kind != ControlRequest::Kind::kStatus) return "error " + who + "tail capture decides when to write (" + config_.live.describe() + ")";
    return "ok " + who + config_.live.describe() + "; " + std::to_string(tail_windows_) + " window(s) written, median step " +
           std::to_string(tail_->median() / 1000) + " us";
  }
  std::vector<CaptureSwitch> switches;
  const std::string reply = schedule_->request(r, t, switches);
  apply(switches, t);
  if (schedule_->recording() && !hooks_.recording()) {
    // The switch was refused (CUPTI could not be attached again, said on the program's stderr):
    // the schedule goes back to paused and the caller is told, not shown a window that records nothing.
    std::vector<CaptureSwitch> none;
    schedule_->request({ControlRequest::Kind::kStop}, t, none);
    return "error " + who + "recording could not start (see the program's stderr); still paused";
  }
  const auto space = reply.find(' ');  // "ok ..." / "error ...": the pid after the first word
  return space == std::string::npos ? reply : reply.substr(0, space + 1) + who + reply.substr(space + 1);
}

std::int64_t LiveCapture::tick() {
  if (!schedule_) return -1;
  const Ns t = hooks_.now();
  std::lock_guard lock(mutex_);
  if (finished_) return -1;
  std::vector<CaptureSwitch> switches;
  schedule_->tick(t, switches);
  apply(switches, t);
  const auto next = schedule_->next_deadline();
  // From now, not from t: the timer sleeps this long once tick returns, and a window opened above
  // took its attach first (with t, each sampled window closed that much late: 0.208-0.217 s for 0.2 s).
  return next ? std::max<Ns>(*next - hooks_.now(), 0) : -1;
}

void LiveCapture::hold(RecordBatch& batch) {
  RecordBatch devices;
  devices.devices = std::move(batch.devices);
  held_->add(batch);
  batch = std::move(devices);
}

std::optional<RecordBatch> LiveCapture::due_window(bool forced, const std::function<void(RecordBatch&)>& flush) {
  std::optional<PendingTail> due;
  {
    std::lock_guard lock(mutex_);
    if (!pending_.empty() && (forced || hooks_.now() >= pending_.front().due)) {
      due = pending_.front();
      pending_.pop_front();
      last_written_end_ = due->end;
    }
  }
  if (!due) return std::nullopt;
  RecordBatch late;
  flush(late);
  hold(late);  // device rows, if any, stay in `late`
  RecordBatch out = held_->take(due->from, due->end);
  out.devices = std::move(late.devices);
  CaptureWindowRow row;
  row.id = ++tail_windows_;
  const bool cut = held_->complete_from() > due->from;
  row.start = std::max(due->from, held_->complete_from());
  row.end = due->end;
  row.opened_by = due->why;
  row.closed_by = cut ? "tail written; held records were over --tail-mb, its first steps are missing" : "tail written";
  out.windows.push_back(row);
  return out;
}

void LiveCapture::forget_old() {
  Ns keep_from = 0;
  {
    std::lock_guard lock(mutex_);
    keep_from = tail_->keep_from();
    if (!pending_.empty()) keep_from = std::min(keep_from, pending_.front().from);
  }
  held_->drop_before(keep_from);
}

std::vector<std::pair<std::string, std::string>> LiveCapture::info() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, std::string>> rows = {{"capture", config_.live.describe()}, {"session", config_.session}};
  if (watches_steps()) rows.emplace_back("step_range", config_.step_range);
  if (schedule_ && watches_steps()) rows.emplace_back("steps_seen", std::to_string(schedule_->steps_seen()));
  if (held_) rows.emplace_back("tail_overflow_rows", std::to_string(held_->overflow_rows()));
  return rows;
}

}  // namespace kernscope::tracer
