// Reading gzip-compressed trace files: the start of the content (for sniffing) or all of it.
#pragma once

#include <string>
#include <vector>

#include "kernscope/error.hpp"

namespace kernscope::readers {

bool is_gzip(const unsigned char* head, std::size_t size);
// The first `size` bytes of the inflated content (fewer when the content is shorter or corrupt).
std::vector<unsigned char> gzip_head(const std::string& path, std::size_t size);
// The whole inflated content; kBadInput for truncated or corrupted data.
Result<std::vector<unsigned char>> inflate_gzip(const std::string& path);

}  // namespace kernscope::readers
