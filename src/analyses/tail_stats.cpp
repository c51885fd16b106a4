// Tail statistics (kernscope tail). Flags, per name:
//   outliers         max / p50 > 2         — some invocations far slower than usual
//   systematic-tail  p99 / p50 > 1.5       — the slow end is a regular occurrence
//   rare-blocker     among the 10 highest tail scores yet under 1 % of total time — cheap on
//                    average, occasionally blocks everything
//   allocation / synchronization (API calls) — calls that stall the host or the device when slow:
//                    allocations and frees, synchronizations, stream waits and queries (api_roles)
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/rank_select.hpp"
#include "analyses/nsys/report_helpers.hpp"
#include "analyses/nsys/sql_numeric.hpp"
#include "analyses/trace_context.hpp"
#include "model/api_roles.hpp"
#include "model/nvtx_names.hpp"
#include "analyses/tail.hpp"

namespace kernscope {
namespace {

constexpr std::size_t kRareBlockerRank = 10;

// select_percentile_ranks and percentile_linear (below) for any integer duration type.
template <class Duration>
void select_ranks(std::vector<Duration>& values, std::initializer_list<double> qs) {
  if (values.empty()) return;
  report::select_ranks_in_place(values, report::percentile_ranks(qs, values.size()));
}

template <class Duration>
double linear_percentile(const std::vector<Duration>& sorted, double q) {
  const auto r = report::percentile_rank(q, sorted.size());
  return report::interpolate(r, static_cast<double>(sorted[r.lo]), static_cast<double>(sorted[r.hi]));
}

// The p-th percentiles of `v` (numpy's linear method), in the order asked, by bucket counting
// (rank_select.hpp).
template <class Duration>
std::vector<double> percentiles(std::vector<Duration>& v, std::initializer_list<double> qs) {
  const std::vector<std::size_t> ranks = report::percentile_ranks(qs, v.size());
  const std::vector<Duration> at = report::values_at_ranks(v, ranks);
  auto value_at = [&](std::size_t rank) {
    return static_cast<double>(at[static_cast<std::size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) - ranks.begin())]);
  };
  std::vector<double> out;
  for (double q : qs) {
    const auto r = report::percentile_rank(q, v.size());
    out.push_back(report::interpolate(r, value_at(r.lo), value_at(r.hi)));
  }
  return out;
}

// One row of statistics over a name's durations (may be reordered).
template <class Duration>
TailRow tail_row(const std::string& name, std::vector<Duration>& v, TailSubject subject) {
  TailRow row;
  row.name = name;
  row.count = static_cast<std::int64_t>(v.size());
  for (auto x : v) row.total_ns += static_cast<std::int64_t>(x);
  row.mean_ns = static_cast<double>(row.total_ns) / static_cast<double>(row.count);
  long double ss = 0;
  for (auto x : v) {
    const long double d = static_cast<long double>(static_cast<std::int64_t>(x)) - row.mean_ns;
    ss += d * d;
  }
  row.stdev_ns = static_cast<double>(std::sqrt(ss / row.count));
  // Order statistics by selection, not a full sort (rank_select.hpp).
  const auto p = percentiles(v, {50, 95, 99});
  row.p50_ns = p[0];
  row.p95_ns = p[1];
  row.p99_ns = p[2];
  row.max_ns = static_cast<std::int64_t>(*std::max_element(v.begin(), v.end()));
  if (row.p50_ns > 0) {
    row.p99_over_p50 = row.p99_ns / row.p50_ns;
    row.max_over_p50 = static_cast<double>(row.max_ns) / row.p50_ns;
  }
  row.tail_score = static_cast<double>(row.max_ns) * std::log2(static_cast<double>(row.count) + 1.0) *
                   std::max(1.0, row.max_over_p50);
  if (row.max_over_p50 > 2) row.flags.emplace_back("outliers");
  if (row.p99_over_p50 > 1.5) row.flags.emplace_back("systematic-tail");
  if (subject == TailSubject::kApi) {
    const ApiRole role = role_of(row.name);
    if (has_any(role, kAllocOrFree)) row.flags.emplace_back("allocation");
    if (has_any(role, kAnyWait)) row.flags.emplace_back("synchronization");
  }
  return row;
}

// Durations grouped by display name, in row order within each group.
template <class Duration>
using DurationGroups = std::map<std::string, std::vector<Duration>>;

// Kernel or API durations by name, with Duration wide enough for every kept row.
template <class Duration>
DurationGroups<Duration> duration_groups(const TraceContext& context, TailSubject subject) {
  const Trace& trace = context.trace();
  DurationGroups<Duration> groups;
  // Durations by name id of the rows `keep` accepts, each vector allocated once at its size
  // (counted first): grown by doubling, the 13 M API calls of the 1 GB export took up to twice
  // their 106 MB. Filled in row order, so every group's values keep their order.
  auto durations_by_id = [&](const auto& names, const auto& columns, auto&& keep) {  // names: a std::vector or a DictColumn
    std::vector<std::uint32_t> count(trace.strings.size() + 1, 0);
    auto slot = [&](StringId id) { return id == kNoString ? trace.strings.size() : id; };
    for (RowIndex i = 0; i < names.size(); ++i) count[slot(names[i])] += keep(i) ? 1 : 0;
    // By slot (a name's id; the last slot for rows without a name), filled through one pointer per
    // slot, so a row costs an index and a store rather than a hash lookup.
    std::vector<std::vector<Duration>> by_slot(count.size());
    std::vector<Duration*> next(count.size(), nullptr);
    for (std::size_t s = 0; s < count.size(); ++s) {
      if (count[s] == 0) continue;
      by_slot[s].resize(count[s]);
      next[s] = by_slot[s].data();
    }
    for (RowIndex i = 0; i < names.size(); ++i) {
      if (keep(i)) *next[slot(names[i])]++ = static_cast<Duration>(columns.end_ns[i] - columns.start_ns[i]);
    }
    std::vector<std::pair<StringId, std::vector<Duration>>> by_id;
    for (std::size_t s = 0; s < count.size(); ++s) {
      if (count[s]) by_id.emplace_back(s == trace.strings.size() ? kNoString : static_cast<StringId>(s), std::move(by_slot[s]));
    }
    return by_id;
  };
  if (subject == TailSubject::kKernel) {
    auto by_id = durations_by_id(trace.kernels.demangled_name, trace.kernels, [](RowIndex) { return true; });
    for (auto& [id, v] : by_id) groups[std::string(trace.strings.get(id))] = std::move(v);
    return groups;
  }
  // A backtraced call is two rows (nsys --cudabacktrace): the nested repeat is left out, so each
  // call counts once, with the time of the row that encloses it (as steps counts calls).
  const report::ApiLookup& lookup = context.api_lookup();
  auto by_id = durations_by_id(trace.api_calls.name, trace.api_calls,
                               [&](RowIndex i) { return !lookup.is_repeat(i, trace.strings); });
  for (auto& [id, v] : by_id) {
    auto& g = groups[std::string(report::api_display_name(trace.strings.get(id)))];
    if (g.empty()) {
      g = std::move(v);  // most names display alone: their values move, not copied
    } else {
      g.insert(g.end(), v.begin(), v.end());
      std::vector<Duration>().swap(v);
    }
  }
  return groups;
}

// Whether every duration of these columns is in [0, 2^32): then 4 bytes hold each (half the
// memory of the 1 GB export's 19 M kernel and API durations); otherwise 8.
template <class Columns>
bool durations_fit_32_bits(const Columns& c) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::int64_t d = c.end_ns[i] - c.start_ns[i];
    if (d < 0 || d > static_cast<std::int64_t>(UINT32_MAX)) return false;
  }
  return true;
}

}  // namespace

Result<TailSubject> parse_tail_subject(const std::string& text) {
  if (text == "kernel") return TailSubject::kKernel;
  if (text == "api") return TailSubject::kApi;
  if (text == "nvtx") return TailSubject::kNvtx;
  return make_error(ErrorCode::kInvalidArgument, "invalid --by '" + text + "' (expected kernel, api or nvtx)");
}

void select_percentile_ranks(std::vector<std::int64_t>& values, std::initializer_list<double> qs) { select_ranks(values, qs); }

double percentile_linear(const std::vector<std::int64_t>& sorted, double q) { return linear_percentile(sorted, q); }

Result<TailResult> tail_statistics(const Trace& trace, TailSubject subject) {
  // Only the launching-call lookup of the context is used: the built-in rules fill the rules' place.
  const TraceContext context(trace, OpRuleSet::builtin());
  return tail_statistics(context, subject);
}

Result<TailResult> tail_statistics(const TraceContext& context, TailSubject subject) {
  const Trace& trace = context.trace();
  TailResult result;
  result.subject = subject;
  std::int64_t grand_total = 0;
  auto add_rows = [&](auto&& groups) {
    for (auto& [name, v] : groups) {
      TailRow row = tail_row(name, v, subject);
      grand_total += row.total_ns;
      result.by_total.push_back(std::move(row));
    }
  };
  if (subject == TailSubject::kKernel) {
    if (!trace.has(EventKind::kKernels)) return std::unexpected(report::no_data(trace, "CUDA kernel data"));
    if (durations_fit_32_bits(trace.kernels)) add_rows(duration_groups<std::uint32_t>(context, subject));
    else add_rows(duration_groups<std::int64_t>(context, subject));
  } else if (subject == TailSubject::kApi) {
    if (!trace.has(EventKind::kApiCalls)) return std::unexpected(report::no_data(trace, "CUDA API data"));
    if (durations_fit_32_bits(trace.api_calls)) add_rows(duration_groups<std::uint32_t>(context, subject));
    else add_rows(duration_groups<std::int64_t>(context, subject));
  } else {
    if (!trace.has(EventKind::kNvtx)) return std::unexpected(report::no_data(trace, "NV Tools Extension (NVTX) data"));
    const NvtxDomainNames domains(trace);
    const auto& n = trace.nvtx;
    DurationGroups<std::int64_t> groups;
    for (RowIndex i = 0; i < n.size(); ++i) {
      if (!is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime) continue;  // unclosed ranges have no duration
      groups[domains.range_label(trace, i)].push_back(n.end_ns[i] - n.start_ns[i]);
    }
    add_rows(groups);
  }
  for (auto& row : result.by_total) {
    row.share_of_total = grand_total ? static_cast<double>(row.total_ns) / static_cast<double>(grand_total) : 0;
  }
  std::stable_sort(result.by_total.begin(), result.by_total.end(),
                   [](const TailRow& a, const TailRow& b) { return a.total_ns > b.total_ns; });
  result.by_tail_score = result.by_total;
  std::stable_sort(result.by_tail_score.begin(), result.by_tail_score.end(),
                   [](const TailRow& a, const TailRow& b) { return a.tail_score > b.tail_score; });
  for (std::size_t i = 0; i < result.by_tail_score.size() && i < kRareBlockerRank; ++i) {
    auto& row = result.by_tail_score[i];
    if (row.share_of_total < 0.01) {
      row.flags.emplace_back("rare-blocker");
      for (auto& same : result.by_total) {
        if (same.name == row.name) same.flags.emplace_back("rare-blocker");
      }
    }
  }
  return result;
}

std::vector<DurationDistribution> duration_distributions(const Trace& trace, const std::vector<TailRow>& rows, std::size_t limit) {
  std::vector<DurationDistribution> out;
  std::unordered_map<std::string_view, std::size_t> slot_of_name;
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
    out.push_back({rows[i].name, 0, 0, 0, 0, 0, {}});
    slot_of_name[rows[i].name] = i;
  }
  // A name's slot looked up once per name id (-1: not drawn), not once per kernel.
  std::unordered_map<StringId, std::ptrdiff_t> slot_of_id;
  const auto& k = trace.kernels;
  for (RowIndex i = 0; i < k.size(); ++i) {
    auto [it, added] = slot_of_id.try_emplace(k.demangled_name[i], -1);
    if (added) {
      const auto found = slot_of_name.find(trace.strings.get(k.demangled_name[i]));
      if (found != slot_of_name.end()) it->second = static_cast<std::ptrdiff_t>(found->second);
    }
    if (it->second >= 0) out[static_cast<std::size_t>(it->second)].sorted_ns.push_back(k.end_ns[i] - k.start_ns[i]);
  }
  std::erase_if(out, [](const DurationDistribution& x) { return x.sorted_ns.empty(); });
  for (auto& x : out) {
    std::sort(x.sorted_ns.begin(), x.sorted_ns.end());
    x.p25 = percentile_linear(x.sorted_ns, 25);
    x.p50 = percentile_linear(x.sorted_ns, 50);
    x.p75 = percentile_linear(x.sorted_ns, 75);
    x.p95 = percentile_linear(x.sorted_ns, 95);
    x.p99 = percentile_linear(x.sorted_ns, 99);
  }
  return out;
}

Table tail_table(const std::vector<TailRow>& rows, TailSubject subject, bool by_score, std::size_t limit) {
  Table t;
  t.report = by_score ? "tail_candidates" : "tail_by_total";
  const char* what = subject == TailSubject::kKernel ? "Kernel" : subject == TailSubject::kApi ? "CUDA API" : "NVTX Range";
  t.title = std::string(what) + (by_score ? " Tail Candidates (by tail score)" : " Tail Statistics (by total time)");
  t.columns = {{"Time", Unit::kPercent}, {"Total Time", Unit::kDuration}, {"Count"}, {"Mean", Unit::kDuration},
               {"StdDev", Unit::kDuration}, {"P50", Unit::kDuration}, {"P95", Unit::kDuration},
               {"P99", Unit::kDuration}, {"Max", Unit::kDuration}, {"P99/P50"}, {"Max/P50"}, {"Tail Score"},
               {"Flags"}, {"Name"}};
  for (std::size_t i = 0; i < rows.size() && (limit == 0 || i < limit); ++i) {
    const auto& r = rows[i];
    std::string flags;
    for (const auto& f : r.flags) flags += (flags.empty() ? "" : " ") + f;
    auto ratio = [&](double v) { return r.p50_ns > 0 ? Cell{sqlite_round(v, 2)} : Cell{}; };  // undefined for p50 = 0
    t.rows.push_back({report::round1(r.share_of_total * 100), r.total_ns, r.count, report::round1(r.mean_ns),
                      report::round1(r.stdev_ns), report::round1(r.p50_ns), report::round1(r.p95_ns),
                      report::round1(r.p99_ns), r.max_ns, ratio(r.p99_over_p50), ratio(r.max_over_p50),
                      static_cast<std::int64_t>(std::llround(r.tail_score)), flags, r.name});
  }
  return t;
}

}  // namespace kernscope
