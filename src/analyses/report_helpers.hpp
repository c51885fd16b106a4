// Pieces shared by the nsys-compatible reports: names as nsys prints them, the standard summary
// columns, and grouping of samples by name.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyses/sample_stats.hpp"
#include "kernscope/reports.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::report {

// nsys drops a trailing version tag from API names: "cudaGetDeviceProperties_v12000" ->
// "cudaGetDeviceProperties" (SQL: CASE substr(name, -6, 2) WHEN '_v' ...).
std::string_view api_display_name(std::string_view name);

// The kernel name column for a variant, with nsys's fallback to the demangled name.
StringId kernel_name(const Trace& trace, RowIndex row, KernelNameVariant variant);

// "[CUDA memcpy Host-to-Device]"; empty when the copy kind has no label (nsys's join drops it).
std::string memcpy_name(const Trace& trace, std::int32_t copy_kind);
inline constexpr std::string_view kMemsetName = "[CUDA memset]";

// round(x, 1) as nsys's SQL applies it.
Cell round1(double value);
// round(total * 100.0 / grand_total, 1); NULL when the grand total is 0.
Cell percent_of(std::int64_t total, std::int64_t grand_total);

// Time (%), Total Time, <count_label>, Avg, Med, Min, Max, StdDev: the columns of every nsys
// *_sum report, followed by the report's own trailing columns.
std::vector<Column> summary_columns(std::string_view count_label);
void append_summary_cells(std::vector<Cell>& row, const SampleStats& stats, std::int64_t grand_total);

// Samples grouped by a key, remembering first-seen order is not needed: callers sort groups.
template <class Key, class Hash = std::hash<Key>>
class Groups {
 public:
  std::vector<std::int64_t>& at(const Key& key) {
    auto [it, inserted] = index_.try_emplace(key, samples_.size());
    if (inserted) {
      keys_.push_back(key);
      samples_.emplace_back();
    }
    return samples_[it->second];
  }
  std::size_t size() const { return keys_.size(); }
  const Key& key(std::size_t i) const { return keys_[i]; }
  std::vector<std::int64_t>& samples(std::size_t i) { return samples_[i]; }

 private:
  std::unordered_map<Key, std::size_t, Hash> index_;
  std::vector<Key> keys_;
  std::vector<std::vector<std::int64_t>> samples_;
};

Error no_data(const Trace& trace, std::string_view what);

}  // namespace kernscope::report
