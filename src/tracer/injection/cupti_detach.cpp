// Paused with CUPTI detached between windows (the policy in cupti_attachment.hpp): the
// clock while detached, attaching CUPTI again for a window, and the detach itself (flush, then
// cuptiFinalize on a program thread leaving a CUDA call, or on the tracer's thread).
#include "tracer/injection/tracer.hpp"

namespace kernscope::tracer {

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
  enable_device_records();  // the devices again, dumped (the writer keeps each once)
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

}  // namespace kernscope::tracer
