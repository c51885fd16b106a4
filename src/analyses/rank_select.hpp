// The values at a few ranks of an unsorted array (the k-th smallest for each asked k), exactly as
// a sort would place them, without sorting or reordering the array when it is large.
//
// Why: the tails read p50/p95/p99 of every name's durations; on the 1 GB export that is 19 M
// values, and std::nth_element, three times over the largest groups, was ~5 % of `report`'s CPU.
// Here one pass counts the values into log-linear buckets (128 per power of two: a bucket spans
// under 1 % of its values), the ranks' buckets are found from the counts, and only the values of
// those few buckets are gathered and selected. Where one bucket holds a large share of the values
// (all durations nearly equal), gathering would copy most of the array: then the array itself is
// selected in place, as before.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kernscope::report {

namespace rank_select_detail {

constexpr int kSubBits = 7;  // 128 buckets per power of two

// Monotonic bucket of a non-negative value: values below 2^kSubBits each have their own; above,
// the bucket is the bit width and the kSubBits bits below the leading one.
inline std::uint32_t bucket_of(std::uint64_t v) {
  if (v < (std::uint64_t{1} << kSubBits)) return static_cast<std::uint32_t>(v);
  const int width = std::bit_width(v);  // > kSubBits
  const int shift = width - 1 - kSubBits;
  const auto mantissa = static_cast<std::uint32_t>((v >> shift) & ((1u << kSubBits) - 1));
  return (static_cast<std::uint32_t>(width - kSubBits) << kSubBits) | mantissa;
}

constexpr std::size_t kBuckets = (64 - kSubBits + 1) << kSubBits;

}  // namespace rank_select_detail

// Where numpy's linear percentile q of n sorted values reads: the ranks below and above the exact
// (fractional) rank, between which it interpolates.
struct PercentileRank {
  std::size_t lo, hi;
  double rank;
};
inline PercentileRank percentile_rank(double q, std::size_t n) {
  const double rank = q / 100.0 * static_cast<double>(n - 1);
  return {static_cast<std::size_t>(std::floor(rank)), static_cast<std::size_t>(std::ceil(rank)), rank};
}
inline double interpolate(const PercentileRank& r, double at_lo, double at_hi) {
  return at_lo + (at_hi - at_lo) * (r.rank - static_cast<double>(r.lo));
}
// Every rank the percentiles `qs` of n values read, ascending, each once.
inline std::vector<std::size_t> percentile_ranks(std::initializer_list<double> qs, std::size_t n) {
  std::vector<std::size_t> ranks;
  for (double q : qs) {
    const PercentileRank r = percentile_rank(q, n);
    ranks.push_back(r.lo);
    ranks.push_back(r.hi);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

// Places the element of each rank (ascending, < values.size()) where a sort would put it, working
// from the highest rank down so each selection narrows the range of the next.
template <class T>
void select_ranks_in_place(std::vector<T>& values, const std::vector<std::size_t>& ranks) {
  auto end = values.end();
  for (std::size_t r = ranks.size(); r-- > 0;) {
    auto nth = values.begin() + static_cast<std::ptrdiff_t>(ranks[r]);
    if (nth < end) std::nth_element(values.begin(), nth, end);
    end = nth;
  }
}

// `values`: non-negative integers. `ranks`: positions in sorted order, each < values.size(),
// ascending. Returns the value at each rank. `values` may be reordered (only in the fallback).
template <class T>
std::vector<T> values_at_ranks(std::vector<T>& values, const std::vector<std::size_t>& ranks) {
  static_assert(std::is_integral_v<T>);
  namespace d = rank_select_detail;
  std::vector<T> out(ranks.size());
  if (ranks.empty() || values.empty()) return out;
  auto in_place = [&] {
    select_ranks_in_place(values, ranks);
    for (std::size_t r = 0; r < ranks.size(); ++r) out[r] = values[ranks[r]];
    return out;
  };
  constexpr std::size_t kSmall = 1 << 14;  // below this, the counting costs more than it saves
  if (values.size() < kSmall) return in_place();
  std::vector<std::uint32_t> counts(d::kBuckets, 0);
  if constexpr (std::is_signed_v<T>) {
    // The buckets hold non-negative values only.
    if (std::any_of(values.begin(), values.end(), [](T v) { return v < 0; })) return in_place();
  }
  for (const T v : values) ++counts[d::bucket_of(static_cast<std::uint64_t>(v))];
  // Each rank's bucket and its position within the bucket.
  struct Wanted {
    std::uint32_t bucket;
    std::size_t below;  // values in lower buckets
  };
  std::vector<Wanted> wanted(ranks.size());
  std::size_t seen = 0, r = 0;
  for (std::uint32_t b = 0; b < d::kBuckets && r < ranks.size(); ++b) {
    while (r < ranks.size() && ranks[r] < seen + counts[b]) wanted[r++] = {b, seen};
    seen += counts[b];
  }
  // The distinct buckets asked for, and how many values they hold together.
  std::vector<std::uint32_t> buckets;
  std::size_t gathered_size = 0;
  for (const auto& w : wanted) {
    if (buckets.empty() || buckets.back() != w.bucket) {
      buckets.push_back(w.bucket);
      gathered_size += counts[w.bucket];
    }
  }
  if (gathered_size > values.size() / 8) return in_place();
  // Each asked bucket's values, gathered bucket after bucket (buckets ascend, so the gathered
  // array is ordered between buckets).
  std::vector<std::size_t> offset(buckets.size());
  for (std::size_t i = 0, at = 0; i < buckets.size(); at += counts[buckets[i]], ++i) offset[i] = at;
  std::vector<std::int32_t> slot_of_bucket(d::kBuckets, -1);
  for (std::size_t i = 0; i < buckets.size(); ++i) slot_of_bucket[buckets[i]] = static_cast<std::int32_t>(i);
  std::vector<T> gathered(gathered_size);
  std::vector<std::size_t> fill = offset;
  for (const T v : values) {
    const std::int32_t s = slot_of_bucket[d::bucket_of(static_cast<std::uint64_t>(v))];
    if (s >= 0) gathered[fill[static_cast<std::size_t>(s)]++] = v;
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::size_t s = static_cast<std::size_t>(slot_of_bucket[wanted[i].bucket]);
    auto first = gathered.begin() + static_cast<std::ptrdiff_t>(offset[s]);
    auto last = first + counts[wanted[i].bucket];
    auto nth = first + static_cast<std::ptrdiff_t>(ranks[i] - wanted[i].below);
    std::nth_element(first, nth, last);
    out[i] = *nth;
  }
  return out;
}

}  // namespace kernscope::report
