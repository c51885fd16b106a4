#include "tracer/buffer_pool.hpp"

#include <cstdlib>
#include <cstring>

namespace kernscope::tracer {

// CUPTI requires 8-byte aligned buffers; calloc aligns for any scalar type (16 bytes on x86-64)
// and maps large blocks as fresh zero pages, so the pool costs no memory until CUPTI fills it.
static_assert(alignof(std::max_align_t) % 8 == 0);

BufferPool::BufferPool(std::size_t count, std::size_t bytes) : bytes_(bytes) {
  all_.reserve(count);
  free_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto* buffer = static_cast<std::uint8_t*>(std::calloc(1, bytes));
    if (!buffer) break;
    all_.push_back(buffer);
    free_.push_back(buffer);
  }
}

BufferPool::~BufferPool() {
  for (auto* buffer : all_) std::free(buffer);
}

std::uint8_t* BufferPool::take() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) {
    ++exhausted_;
    return nullptr;
  }
  std::uint8_t* buffer = free_.back();
  free_.pop_back();
  return buffer;
}

void BufferPool::give_back(std::uint8_t* buffer) {
  // All of it: CUPTI's valid-byte count need not cover everything it wrote.
  std::memset(buffer, 0, bytes_);
  std::lock_guard lock(mutex_);
  free_.push_back(buffer);
}

void BufferPool::replace(std::size_t count) {
  std::lock_guard lock(mutex_);
  all_.reserve(all_.size() + count);
  free_.reserve(all_.size() + count);  // a kept buffer handed back late still fits without allocating
  for (std::size_t i = 0; i < count; ++i) {
    auto* buffer = static_cast<std::uint8_t*>(std::calloc(1, bytes_));
    if (!buffer) break;
    all_.push_back(buffer);
    free_.push_back(buffer);
  }
}

std::size_t BufferPool::free_count() {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace kernscope::tracer
