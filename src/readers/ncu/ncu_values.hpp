// Numbers and units as Nsight Compute prints them. Values carry thousands separators
// ("1,048,982,816") and, without `--print-units base`, units scaled to the value's magnitude
// (Kbyte, Mbyte, usecond, msecond, Ghz, Gbyte/second, cycle/nsecond). Everything is brought to one
// base unit per quantity so an export read either way gives the same numbers:
// bytes -> "byte", times -> "ns", frequencies and cycle rates -> "hz", byte rates -> "byte/second".
// Prefixes are decimal (K = 1000), as ncu scales; Ki/Mi/Gi are binary.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernscope::readers::ncu {

// "1,234.5" -> 1234.5; "" / "n/a" / text -> nullopt. A value followed by instance values
// ("12.5 (1.0;2.0)" or "12.5;1.0;2.0", --print-metric-instances) gives its first number.
std::optional<double> parse_ncu_number(std::string_view text);

struct BaseValue {
  double value = 0;
  std::string unit;    // the base unit ("byte", "ns", "hz", "byte/second", "%", or the unit as given)
  bool scaled = false; // the unit carried a prefix that was applied
};

// The value in the base unit of its quantity; units kernscope does not know are kept as given.
BaseValue to_base_unit(double value, std::string_view unit);

}  // namespace kernscope::readers::ncu
