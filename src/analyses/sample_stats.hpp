// Summary statistics of a group of integer samples, computed the way nsys's SQL does: sum and
// count exact, mean as double(sum)/count, median as the mean of the two middle values, standard
// deviation with the sample (n - 1) denominator, 0 for a single sample.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kernscope {

struct SampleStats {
  std::int64_t count = 0;
  std::int64_t sum = 0;
  double mean = 0;
  double median = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  double stdev = 0;
};

// Reorders `samples` (partial sort for the median). Returns nullopt for an empty group.
std::optional<SampleStats> compute_stats(std::vector<std::int64_t>& samples);

}  // namespace kernscope
