#include "analyses/nsys/sql_numeric.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace kernscope {

double sqlite_round(double value, int digits) {
  if (!std::isfinite(value)) return value;
  // 80 decimals print a double's binary value exactly for any magnitude kernscope rounds
  // (|x| >= 1e-20): a double has at most 52 - exponent fractional binary digits, each one
  // needing one decimal digit.
  std::string text = fmt::format("{:.80f}", std::fabs(value));
  const std::size_t point = text.find('.');
  const std::size_t cut = point + 1 + static_cast<std::size_t>(digits);
  const bool round_up = text[cut] >= '5';
  text.resize(cut);
  if (round_up) {
    std::size_t i = text.size();
    while (i > 0) {
      --i;
      if (text[i] == '.') continue;
      if (text[i] != '9') {
        ++text[i];
        break;
      }
      text[i] = '0';
      if (i == 0) text.insert(text.begin(), '1');
    }
  }
  const double rounded = std::strtod(text.c_str(), nullptr);
  return value < 0 ? -rounded : rounded;
}

}  // namespace kernscope
