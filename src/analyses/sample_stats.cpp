#include "analyses/sample_stats.hpp"

#include <algorithm>
#include <cmath>

namespace kernscope {

std::optional<SampleStats> compute_stats(std::vector<std::int64_t>& samples) {
  if (samples.empty()) return std::nullopt;
  SampleStats s;
  s.count = static_cast<std::int64_t>(samples.size());
  s.min = samples[0];
  s.max = samples[0];
  for (auto v : samples) {
    s.sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = static_cast<double>(s.sum) / static_cast<double>(s.count);
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const std::int64_t upper = samples[mid];
  if (samples.size() % 2 == 1) {
    s.median = static_cast<double>(upper);
  } else {
    const std::int64_t lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
    s.median = (static_cast<double>(lower) + static_cast<double>(upper)) / 2.0;
  }
  if (s.count > 1) {
    // Two passes in long double: the deviations are small against the mean, which keeps the
    // result within an ulp of the exact value for the 0.1 rounding that follows.
    long double mean = static_cast<long double>(s.sum) / s.count;
    long double acc = 0;
    for (auto v : samples) {
      const long double d = static_cast<long double>(v) - mean;
      acc += d * d;
    }
    s.stdev = static_cast<double>(std::sqrt(acc / (s.count - 1)));
  }
  return s;
}

}  // namespace kernscope
