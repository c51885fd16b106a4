// The whole text of an input file that may be gzip- or xz-compressed (ncu CSVs, cuBLAS logs): these are
// small, so they are read into memory at once.
#pragma once

#include <string>

#include "kernscope/error.hpp"

namespace kernscope::readers {

// kNotFound for a missing file, kBadInput for a truncated compressed stream.
Result<std::string> read_text_input(const std::string& path);

}  // namespace kernscope::readers
