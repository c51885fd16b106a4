// Streams a Chrome/Kineto trace document without holding it in memory: finds the members of the
// top-level object and each element of its "traceEvents" array, and hands each one over as a
// contiguous span of text. No JSON library offers incremental parsing of one huge array, so this
// scanner does only the structural part (strings, brackets); simdjson parses each span.
//
// The scanner also spots what Kineto's hand-written JSON gets wrong (raw control characters and
// unescaped quotes in strings, invalid escapes, trailing commas) and marks those spans suspicious,
// so the slow repair path runs only on them. A document that ends inside an element (a killed
// process) is cut at the last complete element and reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "kernscope/error.hpp"
#include "readers/kineto/byte_source.hpp"

namespace kernscope::kineto {

// Bytes readable after every span handed out (simdjson reads up to 64 bytes past the end).
inline constexpr std::size_t kSpanPadding = 64;

struct Span {
  std::string_view text;
  std::int64_t offset = 0;  // of the first byte in the document
  bool suspicious = false;  // may need repair before parsing
};

struct SplitResult {
  std::int64_t document_bytes = 0;
  std::int64_t elements = 0;
  std::int64_t trailing_commas = 0;     // repaired between elements or members
  bool truncated = false;               // document ended before its closing brackets
  std::int64_t truncated_bytes = 0;     // bytes of the incomplete last element that were dropped
  bool top_level_array = false;         // "[...]" (plain Chrome trace) rather than {"traceEvents": [...]}
  bool has_trace_events = false;
};

class JsonSplitter {
 public:
  using MemberFn = std::function<Result<void>(std::string_view key, const Span& value)>;
  using ElementFn = std::function<Result<void>(const Span& element)>;

  // `max_element_bytes` bounds one element (and the buffer); larger ones are an error.
  explicit JsonSplitter(std::size_t chunk_bytes = 8u << 20, std::size_t max_element_bytes = 1u << 30)
      : chunk_bytes_(chunk_bytes), max_element_bytes_(max_element_bytes) {}

  Result<SplitResult> run(ByteSource& source, const MemberFn& on_member, const ElementFn& on_element);

 private:
  std::size_t chunk_bytes_;
  std::size_t max_element_bytes_;
};

// Scans one JSON value starting at text[0]. Exposed for the repair code and tests.
struct ValueScan {
  enum Status { kComplete, kNeedMore, kBad } status = kNeedMore;
  std::size_t length = 0;   // bytes of the value when complete
  bool suspicious = false;
  const char* why = "";     // for kBad
};
// `at_end`: no more bytes will come after text (lets a final scalar complete).
ValueScan scan_json_value(std::string_view text, bool at_end);

}  // namespace kernscope::kineto
