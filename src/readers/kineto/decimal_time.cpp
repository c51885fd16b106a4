#include "readers/kineto/decimal_time.hpp"

#include <limits>

namespace kernscope::kineto {
namespace {

bool mul_add(std::int64_t& value, int factor, int add) {
  if (value > (std::numeric_limits<std::int64_t>::max() - add) / factor) return false;
  value = value * factor + add;
  return true;
}

}  // namespace

std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  // Significant digits with the decimal exponent they carry: value = digits * 10^exponent us.
  std::int64_t digits = 0;
  int exponent = 0;
  bool any_digit = false;
  int dropped_first = -1;  // first digit that did not fit in int64, -1 when none was dropped
  auto take_digit = [&](int d, bool fractional) {
    any_digit = true;
    if (dropped_first < 0 && digits <= (std::numeric_limits<std::int64_t>::max() - d) / 10) {
      digits = digits * 10 + d;
      if (fractional) --exponent;
    } else {
      if (dropped_first < 0) dropped_first = d;
      if (!fractional) ++exponent;
    }
  };
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) take_digit(text[i] - '0', false);
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) take_digit(text[i] - '0', true);
  }
  if (!any_digit) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    int e = 0;
    bool any = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      any = true;
      if (e < 100000) e = e * 10 + (text[i] - '0');
    }
    if (!any) return std::nullopt;
    exponent += exp_negative ? -e : e;
  }
  if (i != text.size()) return std::nullopt;
  exponent += 3;  // microseconds -> nanoseconds
  std::int64_t ns = digits;
  if (exponent >= 0) {
    if (digits != 0) {
      for (int k = 0; k < exponent; ++k) {
        if (!mul_add(ns, 10, 0)) return std::nullopt;
      }
    }
    // A digit that did not fit sits right below the nanosecond only when exponent is 0; with a
    // larger exponent the value has already overflowed above.
    if (exponent == 0 && dropped_first >= 5 && !mul_add(ns, 1, 1)) return std::nullopt;
  } else {
    // Drop -exponent digits. Half away from zero looks at the first dropped digit only.
    int first_dropped = 0;
    // int64 has at most 19 digits, so after 21 drops the value and the digit are both zero.
    const int drops = -exponent < 21 ? -exponent : 21;
    for (int k = 0; k < drops; ++k) {
      first_dropped = static_cast<int>(ns % 10);
      ns /= 10;
    }
    if (first_dropped >= 5) ++ns;
  }
  return negative ? -ns : ns;
}

}  // namespace kernscope::kineto
