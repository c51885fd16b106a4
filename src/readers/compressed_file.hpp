// Reading compressed trace files, gzip or xz (xz stores an nsys export in about 60 % of gzip's
// bytes): which compression a file has, the start of its content (for sniffing), its content in
// blocks (streamed readers) or all of it. The one home of decompression for every reader.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"

namespace kernscope::readers {

enum class Compression { kNone, kGzip, kXz };

// From the file's first bytes (the gzip and xz magic numbers).
Compression compression_of(const unsigned char* head, std::size_t size);
std::string_view compression_name(Compression compression);

// A compressed file read in blocks.
class Decompressor {
 public:
  // Reads `path` (or the open descriptor `fd`, which it then owns and closes).
  static Result<std::unique_ptr<Decompressor>> open(const std::string& path, Compression compression, int fd = -1);
  virtual ~Decompressor() = default;
  // Up to `capacity` bytes of content; 0 at its end. kBadInput for corrupt data. A stream that
  // stops before its end (a file cut short) ends cleanly, with cut_short() true afterwards.
  virtual Result<std::size_t> read(unsigned char* out, std::size_t capacity) = 0;
  virtual bool cut_short() const = 0;
};

// The first `size` bytes of the content (fewer when the content is shorter or corrupt).
std::vector<unsigned char> decompressed_head(const std::string& path, Compression compression, std::size_t size);
// The whole content; kBadInput for truncated or corrupted data.
Result<std::vector<unsigned char>> decompress_file(const std::string& path, Compression compression);

}  // namespace kernscope::readers
