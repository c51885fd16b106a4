#include "readers/gzip_file.hpp"

#include <zlib.h>

#include <array>

namespace kernscope::readers {

bool is_gzip(const unsigned char* head, std::size_t size) { return size >= 2 && head[0] == 0x1f && head[1] == 0x8b; }

std::vector<unsigned char> gzip_head(const std::string& path, std::size_t size) {
  std::vector<unsigned char> head(size);
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return {};
  const int n = gzread(file, head.data(), static_cast<unsigned>(head.size()));
  gzclose_r(file);
  head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return head;
}

Result<std::vector<unsigned char>> inflate_gzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return make_error(ErrorCode::kBadInput, path + ": cannot open gzip file");
  gzbuffer(file, 1 << 20);
  std::vector<unsigned char> out;
  std::array<unsigned char, 1 << 16> chunk{};
  while (true) {
    const int n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(file, &code);
      gzclose(file);
      return make_error(ErrorCode::kBadInput, path + ": corrupted gzip data (" + why + ")");
    }
    if (n == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  int code = 0;
  const char* why = gzerror(file, &code);
  std::string message = why ? why : "";
  const int close_rc = gzclose_r(file);
  if (code != Z_OK && code != Z_STREAM_END) {
    return make_error(ErrorCode::kBadInput, path + ": truncated or corrupted gzip data (" + message + ")");
  }
  if (close_rc != Z_OK) {
    return make_error(ErrorCode::kBadInput, path + ": truncated gzip data");
  }
  return out;
}

}  // namespace kernscope::readers
