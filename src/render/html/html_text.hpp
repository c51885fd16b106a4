// Text as HTML needs it: every name escaped (kernel names hold <, >, & and quotes), bytes that are
// not valid UTF-8 or are control characters replaced by U+FFFD, and numbers people read at a glance.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kernscope::html {

// `text` safe as element content and as a double- or single-quoted attribute value.
std::string escape(std::string_view text);

// `text` cut to `max_chars` code points with an ellipsis (the full text goes in a tooltip).
std::string shortened(std::string_view text, std::size_t max_chars);

// A duration with a unit chosen for it: "812 ns", "12.4 µs", "3.07 ms", "1.25 s".
std::string duration(double ns);

// A number with `digits` decimals ("12.5"), and a share as a percentage ("12.5 %").
std::string fixed(double value, int digits);
std::string percent(double share, int digits = 1);

// A number as a sort key for a table cell's data-v (shortest round-trip form).
std::string sort_key(double value);

}  // namespace kernscope::html
