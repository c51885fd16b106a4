// CUPTI activity buffers from a fixed, preallocated pool: CUPTI asks for buffers on its own threads
// while the program runs, so handing one out must not allocate or wait. When every buffer is in use
// the request gets none and CUPTI drops records and counts them (reported in the trace).
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

  std::uint8_t* take();              // nullptr when exhausted
  void give_back(std::uint8_t* buffer);
  std::size_t free_count();
  std::size_t size() const { return all_.size(); }
  std::uint64_t exhausted() const { return exhausted_; }  // requests that got no buffer

 private:
  std::vector<std::uint8_t*> all_;
  std::vector<std::uint8_t*> free_;  // capacity reserved up front: push/pop never allocate
  std::mutex mutex_;                 // held for a push or a pop only
  std::atomic<std::uint64_t> exhausted_{0};
};

}  // namespace kernscope::tracer
