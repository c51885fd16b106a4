// API call records made from CUPTI's callbacks, for the windows of a tracer that detaches CUPTI
// between them. Why not CUPTI's own records: after cuptiFinalize and a re-attach, calls switched on
// one by one for activity records (cuptiActivityEnableRuntimeApi) gave no records on an H200, and
// switching on the RUNTIME/DRIVER kinds whole records every call, PyTorch's several bookkeeping calls
// per launch included (+17..22 % TPOT against +5 % one by one, H100). Callbacks switched on call by
// call (cuptiEnableCallback) do arrive after a re-attach, so the default calls are recorded here,
// each as the CUpti_ActivityAPI record CUPTI would have made (same correlation id, same clock), and
// decoded with CUPTI's records.
//
// Pure: no CUPTI call, so it is unit-tested with calls made in memory. Each thread appends to a
// buffer of its own (a lock nobody else takes but the collector, once per drain).
#pragma once

#include <cupti_activity.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace kernscope::tracer {

class ApiCallRecorder {
 public:
  // At most `max_records` records wait between two take()s; beyond that calls are counted as
  // dropped, as CUPTI counts records it had no buffer for.
  explicit ApiCallRecorder(std::size_t max_records);
  ApiCallRecorder(const ApiCallRecorder&) = delete;
  ApiCallRecorder& operator=(const ApiCallRecorder&) = delete;

  // A window opens at `now` / closes: only calls that entered after the opening and left before
  // the closing are recorded (a call the window cut has no whole record, as with CUPTI's).
  void open(std::int64_t now);
  void close();
  bool is_open() const { return open_.load(std::memory_order_acquire); }

  // At a call's entry: the value its exit needs back, kept in CUPTI's per-call slot
  // (CUpti_CallbackData::correlationData).
  static std::uint64_t entered(std::int64_t now);
  // At a runtime call's entry (before entered): the driver calls the runtime makes inside it come
  // with its correlation id, and CUPTI's records leave them out; so does exited().
  static void runtime_call_entered(std::uint32_t correlation);
  // At the call's exit, with the slot its entry filled (or whatever the slot held when the entry
  // came before the window: such calls are not recorded).
  void exited(bool driver, std::uint32_t cbid, std::uint32_t correlation, std::uint64_t slot, std::int64_t now,
              std::uint32_t pid, std::uint32_t tid, std::uint32_t return_value);

  // Moves every record made so far to `out` (appended); returns how many.
  std::size_t take(std::vector<CUpti_ActivityAPI>& out);
  bool empty() const { return waiting_.load(std::memory_order_acquire) == 0; }
  std::uint64_t dropped() const { return dropped_.load(); }

 private:
  struct ThreadBuffer {
    std::mutex mutex;
    std::vector<CUpti_ActivityAPI> records;
  };
  ThreadBuffer& this_threads_buffer();

  const std::size_t max_records_;
  const std::uint64_t id_;  // tells this recorder's thread-local buffers from another's
  std::atomic<bool> open_{false};
  std::atomic<std::int64_t> opened_at_{0};
  std::atomic<std::size_t> waiting_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex buffers_mutex_;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;  // kept until the recorder goes: threads end
};

}  // namespace kernscope::tracer
