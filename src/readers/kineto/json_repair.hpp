// Repairs the JSON mistakes Kineto's hand-written writer has been seen to make, in one element:
// raw control characters, unescaped quotes and invalid escapes inside strings, invalid UTF-8, and
// trailing commas before '}' or ']'. Runs only on elements the fast path could not parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kernscope::kineto {

struct RepairCounts {
  std::int64_t control_chars = 0;
  std::int64_t quotes = 0;
  std::int64_t escapes = 0;
  std::int64_t invalid_utf8 = 0;
  std::int64_t trailing_commas = 0;
  std::int64_t total() const { return control_chars + quotes + escapes + invalid_utf8 + trailing_commas; }
};

// Returns the repaired text and adds what it changed to `counts`.
std::string repair_json(std::string_view text, RepairCounts& counts);

}  // namespace kernscope::kineto
