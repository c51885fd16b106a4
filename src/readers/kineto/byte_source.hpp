// Where JSON bytes come from: a plain file, a gzip or xz file (decompressed on a thread of its own,
// so decompressing and parsing overlap on two cores), or memory (tests, fuzzing, Python bytes).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "kernscope/error.hpp"

namespace kernscope::kineto {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `capacity` bytes into `out`; 0 at the end of the data.
  virtual Result<std::size_t> read(char* out, std::size_t capacity) = 0;
  // Compressed size on disk, for the "bytes read" figure; the data size when not compressed.
  virtual std::size_t stored_bytes() const = 0;
  // Set after the end is reached when the data was cut short (a compressed stream without its end).
  virtual bool cut_short() const { return false; }
};

// Opens `path`, decompressing it when it starts with the gzip or xz magic.
Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path);
std::unique_ptr<ByteSource> memory_byte_source(std::string_view bytes);

}  // namespace kernscope::kineto
