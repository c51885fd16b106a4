// Tail-aware statistics per name (kernel, CUDA API call or NVTX range): what averages hide.
//   percentiles: linear interpolation between closest ranks (numpy's default);
//   StdDev: population; tail score = max * log2(count + 1) * max(1, max / p50).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

enum class TailSubject { kKernel, kApi, kNvtx };
Result<TailSubject> parse_tail_subject(const std::string& text);

struct TailRow {
  std::string name;
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  double mean_ns = 0, stdev_ns = 0, p50_ns = 0, p95_ns = 0, p99_ns = 0;
  std::int64_t max_ns = 0;
  double p99_over_p50 = 0, max_over_p50 = 0;  // 0 when p50 is 0
  double tail_score = 0;
  double share_of_total = 0;  // of all rows' total time
  std::vector<std::string> flags;  // outliers, systematic-tail, rare-blocker, allocation, synchronization
};

struct TailResult {
  TailSubject subject = TailSubject::kKernel;
  std::vector<TailRow> by_total;       // all names, total time descending
  std::vector<TailRow> by_tail_score;  // all names, tail score descending
};

// numpy.percentile(values, q) with the default linear method. `sorted` is ascending and
// non-empty, or prepared by select_percentile_ranks for the same q (only the ranks q reads are
// then in place).
double percentile_linear(const std::vector<std::int64_t>& sorted, double q);
void select_percentile_ranks(std::vector<std::int64_t>& values, std::initializer_list<double> qs);

Result<TailResult> tail_statistics(const Trace& trace, TailSubject subject);
class TraceContext;
Result<TailResult> tail_statistics(const TraceContext& context, TailSubject subject);  // sharing the run's context
// Every duration of one kernel name, ascending, with its quartiles and upper percentiles (numpy's
// linear method): what report's page draws as a box and a histogram per kernel.
struct DurationDistribution {
  std::string name;
  double p25 = 0, p50 = 0, p75 = 0, p95 = 0, p99 = 0;
  std::vector<std::int64_t> sorted_ns;  // every duration, ascending, not empty
};

// The distributions of the kernels named by the first `limit` of `rows` (kernel tail rows), in
// their order; a name no kernel carries is left out.
std::vector<DurationDistribution> duration_distributions(const Trace& trace, const std::vector<TailRow>& rows, std::size_t limit);

// As a report table (nsys-style headers with units); at most `limit` rows (0: all).
Table tail_table(const std::vector<TailRow>& rows, TailSubject subject, bool by_score, std::size_t limit);

}  // namespace kernscope
