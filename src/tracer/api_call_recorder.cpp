#include "tracer/api_call_recorder.hpp"

#include <thread>

namespace kernscope::tracer {

namespace {

// The entry's slot: this bit, set only by entered(), and the entry's timestamp below it. A slot
// without it was not filled by an entry this recorder saw.
constexpr std::uint64_t kEntered = std::uint64_t{1} << 63;

std::atomic<std::uint64_t> g_next_recorder_id{1};

// The calling thread's buffer of the recorder it used last (one recorder per traced process; tests
// make several).
struct CachedBuffer {
  std::uint64_t recorder = 0;
  void* buffer = nullptr;
};
thread_local CachedBuffer t_cached;

// The correlation id of the runtime call this thread is inside (0: none).
thread_local std::uint32_t t_runtime_call = 0;

}  // namespace

ApiCallRecorder::ApiCallRecorder(std::size_t max_records)
    : max_records_(max_records), id_(g_next_recorder_id.fetch_add(1)) {}

void ApiCallRecorder::open(std::int64_t now) {
  opened_at_.store(now, std::memory_order_release);
  open_.store(true, std::memory_order_release);
}

void ApiCallRecorder::close() { open_.store(false, std::memory_order_release); }

std::uint64_t ApiCallRecorder::entered(std::int64_t now) {
  return kEntered | (static_cast<std::uint64_t>(now) & ~kEntered);
}

void ApiCallRecorder::runtime_call_entered(std::uint32_t correlation) { t_runtime_call = correlation; }

ApiCallRecorder::ThreadBuffer& ApiCallRecorder::this_threads_buffer() {
  if (t_cached.recorder == id_) return *static_cast<ThreadBuffer*>(t_cached.buffer);
  std::lock_guard lock(buffers_mutex_);
  buffers_.push_back(std::make_unique<ThreadBuffer>());
  t_cached = {id_, buffers_.back().get()};
  return *buffers_.back();
}

void ApiCallRecorder::exited(bool driver, std::uint32_t cbid, std::uint32_t correlation, std::uint64_t slot,
                             std::int64_t now, std::uint32_t pid, std::uint32_t tid, std::uint32_t return_value) {
  if (correlation != 0 && correlation == t_runtime_call) {
    if (driver) return;  // made by the runtime call it is inside (cuLaunchKernel inside cudaLaunchKernel)
    t_runtime_call = 0;  // the runtime call itself leaves
  }
  if (!(slot & kEntered) || !is_open()) return;
  const auto start = static_cast<std::int64_t>(slot & ~kEntered);
  // An entry before this window (the slot kept from then, or never filled) has no place in it.
  if (start < opened_at_.load(std::memory_order_acquire) || start > now) return;
  if (waiting_.fetch_add(1, std::memory_order_acq_rel) >= max_records_) {
    waiting_.fetch_sub(1, std::memory_order_acq_rel);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  CUpti_ActivityAPI record{};
  record.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
  record.cbid = cbid;
  record.start = static_cast<std::uint64_t>(start);
  record.end = static_cast<std::uint64_t>(now);
  record.processId = pid;
  record.threadId = tid;
  record.correlationId = correlation;
  record.returnValue = return_value;
  ThreadBuffer& buffer = this_threads_buffer();
  std::lock_guard lock(buffer.mutex);
  buffer.records.push_back(record);
}

std::size_t ApiCallRecorder::take(std::vector<CUpti_ActivityAPI>& out) {
  std::size_t taken = 0;
  std::lock_guard lock(buffers_mutex_);
  for (auto& buffer : buffers_) {
    std::lock_guard buffer_lock(buffer->mutex);
    out.insert(out.end(), buffer->records.begin(), buffer->records.end());
    taken += buffer->records.size();
    buffer->records.clear();
  }
  waiting_.fetch_sub(taken, std::memory_order_acq_rel);
  return taken;
}

}  // namespace kernscope::tracer
