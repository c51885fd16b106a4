#include "readers/compressed_file.hpp"

#include <fcntl.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kernscope::readers {
namespace {

class GzipDecompressor final : public Decompressor {
 public:
  GzipDecompressor(gzFile file, std::string path) : file_(file), path_(std::move(path)) {}
  ~GzipDecompressor() override { gzclose_r(file_); }

  Result<std::size_t> read(unsigned char* out, std::size_t capacity) override {
    std::size_t total = 0;
    while (total < capacity && !ended_) {
      const std::size_t want = std::min<std::size_t>(capacity - total, 1u << 30);
      const int n = gzread(file_, out + total, static_cast<unsigned>(want));
      if (n < 0) {
        int code = 0;
        return make_error(ErrorCode::kBadInput, path_ + ": corrupted gzip data (" + gzerror(file_, &code) + ")");
      }
      if (n == 0) {
        ended_ = true;
        int code = 0;
        const char* why = gzerror(file_, &code);
        // A stream cut short reads as a clean end with Z_BUF_ERROR.
        if (code == Z_BUF_ERROR) {
          cut_short_ = true;
        } else if (code != Z_OK && code != Z_STREAM_END) {
          return make_error(ErrorCode::kBadInput,
                            path_ + ": truncated or corrupted gzip data (" + (why ? why : "") + ")");
        }
        break;
      }
      total += static_cast<std::size_t>(n);
    }
    return total;
  }
  bool cut_short() const override { return cut_short_; }

 private:
  gzFile file_;
  std::string path_;
  bool ended_ = false;
  bool cut_short_ = false;
};

std::string lzma_message(lzma_ret code) {
  switch (code) {
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_FORMAT_ERROR: return "not in the xz format";
    case LZMA_OPTIONS_ERROR: return "unsupported compression options";
    case LZMA_DATA_ERROR: return "compressed data is corrupt";
    case LZMA_BUF_ERROR: return "compressed data is truncated";
    case LZMA_UNSUPPORTED_CHECK: return "unsupported integrity check";
    default: return "liblzma error " + std::to_string(static_cast<int>(code));
  }
}

class XzDecompressor final : public Decompressor {
 public:
  XzDecompressor(int fd, std::string path) : fd_(fd), path_(std::move(path)), input_(1u << 16) {}
  ~XzDecompressor() override {
    lzma_end(&stream_);
    ::close(fd_);
  }

  Result<void> start() {
    // Concatenated streams are one content, as xz itself reads them.
    const lzma_ret rc = lzma_stream_decoder(&stream_, UINT64_MAX, LZMA_CONCATENATED);
    if (rc != LZMA_OK) return make_error(ErrorCode::kBadInput, path_ + ": cannot read xz data (" + lzma_message(rc) + ")");
    return {};
  }

  Result<std::size_t> read(unsigned char* out, std::size_t capacity) override {
    stream_.next_out = out;
    stream_.avail_out = capacity;
    while (stream_.avail_out > 0 && !ended_) {
      if (stream_.avail_in == 0 && !input_ended_) {
        ssize_t n;
        do n = ::read(fd_, input_.data(), input_.size());
        while (n < 0 && errno == EINTR);
        if (n < 0) return make_error(ErrorCode::kIo, path_ + ": read failed: " + std::strerror(errno));
        if (n == 0) input_ended_ = true;
        stream_.next_in = input_.data();
        stream_.avail_in = static_cast<std::size_t>(n);
      }
      const lzma_ret rc = lzma_code(&stream_, input_ended_ ? LZMA_FINISH : LZMA_RUN);
      if (rc == LZMA_STREAM_END) {
        ended_ = true;
      } else if (rc == LZMA_BUF_ERROR && input_ended_) {
        ended_ = true;  // the file ends before the stream does: no more progress is possible
        cut_short_ = true;
      } else if (rc != LZMA_OK) {
        return make_error(ErrorCode::kBadInput, path_ + ": corrupted xz data (" + lzma_message(rc) + ")");
      }
    }
    return capacity - stream_.avail_out;
  }
  bool cut_short() const override { return cut_short_; }

 private:
  int fd_;
  std::string path_;
  std::vector<std::uint8_t> input_;
  lzma_stream stream_ = LZMA_STREAM_INIT;
  bool input_ended_ = false;
  bool ended_ = false;
  bool cut_short_ = false;
};

}  // namespace

Compression compression_of(const unsigned char* head, std::size_t size) {
  if (size >= 2 && head[0] == 0x1f && head[1] == 0x8b) return Compression::kGzip;
  static constexpr unsigned char kXzMagic[6] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
  if (size >= sizeof kXzMagic && std::memcmp(head, kXzMagic, sizeof kXzMagic) == 0) return Compression::kXz;
  return Compression::kNone;
}

std::string_view compression_name(Compression compression) {
  switch (compression) {
    case Compression::kGzip: return "gzip";
    case Compression::kXz: return "xz";
    case Compression::kNone: break;
  }
  return "none";
}

Result<std::unique_ptr<Decompressor>> Decompressor::open(const std::string& path, Compression compression, int fd) {
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::kBadInput, path + ": cannot open: " + std::strerror(errno));
  if (compression == Compression::kGzip) {
    gzFile file = gzdopen(fd, "rb");
    if (!file) {
      ::close(fd);
      return make_error(ErrorCode::kBadInput, path + ": cannot open gzip file");
    }
    gzbuffer(file, 1 << 20);
    return std::unique_ptr<Decompressor>(new GzipDecompressor(file, path));
  }
  if (compression == Compression::kXz) {
    auto xz = std::make_unique<XzDecompressor>(fd, path);
    if (auto started = xz->start(); !started) return std::unexpected(started.error());
    return std::unique_ptr<Decompressor>(std::move(xz));
  }
  ::close(fd);
  return make_error(ErrorCode::kBadInput, path + ": not compressed");
}

std::vector<unsigned char> decompressed_head(const std::string& path, Compression compression, std::size_t size) {
  auto reader = Decompressor::open(path, compression);
  if (!reader) return {};
  std::vector<unsigned char> head(size);
  auto n = (*reader)->read(head.data(), head.size());
  head.resize(n ? *n : 0);
  return head;
}

Result<std::vector<unsigned char>> decompress_file(const std::string& path, Compression compression) {
  auto reader = Decompressor::open(path, compression);
  if (!reader) return std::unexpected(reader.error());
  std::vector<unsigned char> out;
  std::array<unsigned char, 1 << 16> chunk{};
  while (true) {
    auto n = (*reader)->read(chunk.data(), chunk.size());
    if (!n) return std::unexpected(n.error());
    if (*n == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*n));
  }
  if ((*reader)->cut_short()) {
    return make_error(ErrorCode::kBadInput, path + ": truncated " + std::string(compression_name(compression)) + " data");
  }
  return out;
}

}  // namespace kernscope::readers
