// CUPTI activity buffers from a fixed, preallocated pool: CUPTI asks for buffers on its own threads
// while the program runs, so handing one out must not allocate or wait. When every buffer is in use
// the request gets none and CUPTI drops records and counts them (reported in the trace).
// Buffers are handed out zeroed: otherwise CUPTI zeroes each one itself, on the program's thread
// that asked for it (a stall in the launch path); here the collector zeroes a buffer when it gives
// it back, off that path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace kernscope::tracer {

class BufferPool {
 public:
  BufferPool(std::size_t count, std::size_t bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  std::uint8_t* take();                    // zeroed; nullptr when exhausted
  void give_back(std::uint8_t* buffer);    // zeroes it (the caller's thread pays for that)
  std::size_t free_count();
  std::size_t size() const { return all_.size(); }
  std::uint64_t exhausted() const { return exhausted_; }  // requests that got no buffer
  // Adds `count` new buffers for ones CUPTI will never hand back (cuptiFinalize can keep one it had
  // not filled): a paused tracer detaches once per window, and the pool must not dwindle.
  void replace(std::size_t count);

 private:
  std::size_t bytes_ = 0;
  std::vector<std::uint8_t*> all_;
  std::vector<std::uint8_t*> free_;  // capacity reserved up front: push/pop never allocate
  std::mutex mutex_;                 // held for a push or a pop only
  std::atomic<std::uint64_t> exhausted_{0};
};

}  // namespace kernscope::tracer
