#include "readers/kineto/byte_source.hpp"

#include "readers/compressed_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kernscope::kineto {
namespace {

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, std::string path, std::size_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  Result<std::size_t> read(char* out, std::size_t capacity) override {
    while (true) {
      const ssize_t n = ::read(fd_, out, capacity);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) return make_error(ErrorCode::kIo, path_ + ": read failed: " + std::strerror(errno));
    }
  }
  std::size_t stored_bytes() const override { return size_; }

 private:
  int fd_;
  std::string path_;
  std::size_t size_;
};

// Decompresses (gzip or xz) on a producer thread into a small bounded queue of blocks: memory stays
// at a few blocks whatever the file size, and the consumer parses while the next block decompresses.
class CompressedSource final : public ByteSource {
 public:
  static constexpr std::size_t kBlockBytes = 4u << 20;
  static constexpr std::size_t kMaxQueued = 3;

  CompressedSource(std::unique_ptr<readers::Decompressor> reader, std::size_t size)
      : reader_(std::move(reader)), size_(size) {
    producer_ = std::thread([this] { produce(); });
  }
  ~CompressedSource() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    producer_.join();
  }

  Result<std::size_t> read(char* out, std::size_t capacity) override {
    std::size_t copied = 0;
    while (copied < capacity) {
      if (current_offset_ == current_.size()) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || finished_; });
        if (queue_.empty()) {
          if (error_) return std::unexpected(*error_);
          break;
        }
        current_ = std::move(queue_.front());
        queue_.pop_front();
        current_offset_ = 0;
        changed_.notify_all();
      }
      const std::size_t n = std::min(capacity - copied, current_.size() - current_offset_);
      std::memcpy(out + copied, current_.data() + current_offset_, n);
      copied += n;
      current_offset_ += n;
    }
    return copied;
  }
  std::size_t stored_bytes() const override { return size_; }
  // A stream cut short reads as a clean end: the JSON reader then finds the cut itself and
  // reports it as a truncated trace.
  bool cut_short() const override { return cut_short_; }

 private:
  void produce() {
    while (true) {
      std::vector<char> block(kBlockBytes);
      auto n = reader_->read(reinterpret_cast<unsigned char*>(block.data()), block.size());
      std::unique_lock lock(mutex_);
      if (!n || *n == 0) {
        if (!n) error_ = n.error();
        cut_short_ = reader_->cut_short();
        finished_ = true;
        changed_.notify_all();
        return;
      }
      block.resize(*n);
      changed_.wait(lock, [&] { return queue_.size() < kMaxQueued || stop_; });
      if (stop_) return;
      queue_.push_back(std::move(block));
      changed_.notify_all();
    }
  }

  std::unique_ptr<readers::Decompressor> reader_;
  std::size_t size_;
  std::thread producer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<char>> queue_;
  bool finished_ = false;
  bool stop_ = false;
  std::atomic<bool> cut_short_{false};
  std::optional<Error> error_;
  std::vector<char> current_;
  std::size_t current_offset_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  Result<std::size_t> read(char* out, std::size_t capacity) override {
    const std::size_t n = std::min(capacity, bytes_.size() - offset_);
    std::memcpy(out, bytes_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  std::size_t stored_bytes() const override { return bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t offset_ = 0;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::kBadInput, path + ": cannot open: " + std::strerror(errno));
  unsigned char magic[6] = {0, 0, 0, 0, 0, 0};
  const ssize_t got = ::pread(fd, magic, sizeof magic, 0);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  ::lseek(fd, 0, SEEK_SET);
  const std::size_t stored = size > 0 ? static_cast<std::size_t>(size) : 0;
  const readers::Compression compression = readers::compression_of(magic, got > 0 ? static_cast<std::size_t>(got) : 0);
  if (compression != readers::Compression::kNone) {
    auto reader = readers::Decompressor::open(path, compression, fd);
    if (!reader) return std::unexpected(reader.error());
    return std::unique_ptr<ByteSource>(new CompressedSource(std::move(*reader), stored));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<ByteSource>(new FileSource(fd, path, stored));
}

std::unique_ptr<ByteSource> memory_byte_source(std::string_view bytes) {
  return std::make_unique<MemorySource>(bytes);
}

}  // namespace kernscope::kineto
