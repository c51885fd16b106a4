#include "tracer/buffer_pool.hpp"

#include <cstdlib>

namespace kernscope::tracer {

// CUPTI requires 8-byte aligned buffers.
constexpr std::size_t kAlignment = 8;

BufferPool::BufferPool(std::size_t count, std::size_t bytes) {
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  all_.reserve(count);
  free_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlignment, rounded));
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
  std::lock_guard lock(mutex_);
  free_.push_back(buffer);
}

std::size_t BufferPool::free_count() {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace kernscope::tracer
