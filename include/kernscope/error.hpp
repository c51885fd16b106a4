// Errors travel as values (std::expected) through the library; the CLI turns them into one line on
// stderr and exit code 2, the Python binding into an exception. Nothing below the front ends throws
// on bad input.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace kernscope {

enum class ErrorCode {
  kInvalidArgument,  // bad option, bad filter grammar, unknown report
  kNotFound,         // missing file, NVTX range not found
  kBadInput,         // not a trace, truncated, corrupted, wrong format
  kNoData,           // the trace lacks what a report needs (report is skipped, others go on)
  kIo,               // cannot write output
  kInternal,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> make_error(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

}  // namespace kernscope
