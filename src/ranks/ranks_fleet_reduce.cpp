// The fleet's reduce (see ranks_fleet_reduce.hpp): the ranks engine on the digests, then the totals
// and utilisation only the fleet digest carries.
#include "ranks/ranks_fleet_reduce.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace kernscope::ranks {
namespace {

void kernel_totals(const std::vector<NumberedDigest>& traces, FleetReduction& out) {
  std::map<std::string, KernelAcross> by_name;
  std::map<std::string, std::vector<double>> p50s;
  std::map<std::string, std::pair<ClassTotal, std::set<std::int64_t>>> by_class;
  for (const auto& t : traces) {
    for (const KernelTotals& k : t.digest.kernels) {
      auto [it, added] = by_name.try_emplace(k.name);
      KernelAcross& row = it->second;
      if (added) {
        row.name = k.name;
        row.op_class = k.op_class;
        row.min_trace_total_ns = k.total_ns;
      }
      ++row.traces;
      row.count += k.count;
      row.total_ns += k.total_ns;
      row.min_trace_total_ns = std::min(row.min_trace_total_ns, k.total_ns);
      if (added || k.total_ns > row.max_trace_total_ns) {
        row.max_trace_total_ns = k.total_ns;
        row.slowest_trace = t.trace;
      }
      row.max_p99_ns = added ? k.p99_ns : std::max(row.max_p99_ns, k.p99_ns);
      row.max_ns = std::max(row.max_ns, k.max_ns);
      p50s[k.name].push_back(k.p50_ns);
      auto& [cls, seen] = by_class[k.op_class];
      cls.op_class = k.op_class;
      cls.kernels += k.count;
      cls.total_ns += k.total_ns;
      seen.insert(t.trace);
    }
  }
  for (auto& [name, row] : by_name) {
    row.median_p50_ns = median_of(std::move(p50s[name]));
    out.kernels.push_back(std::move(row));
  }
  std::stable_sort(out.kernels.begin(), out.kernels.end(),
                   [](const KernelAcross& a, const KernelAcross& b) { return a.total_ns > b.total_ns; });
  for (auto& [name, entry] : by_class) {
    auto& [cls, seen] = entry;
    cls.traces = static_cast<std::int64_t>(seen.size());
    cls.mean_per_trace_ns = static_cast<double>(cls.total_ns) / static_cast<double>(cls.traces);
    out.classes.push_back(std::move(cls));
  }
  std::stable_sort(out.classes.begin(), out.classes.end(),
                   [](const ClassTotal& a, const ClassTotal& b) { return a.total_ns > b.total_ns; });
}

// Each rank's busy bins moved onto the reference's clock by its (rounded) offset, as every aligned
// time of analyze_ranks is, then put into the set's bins counted from the earliest aligned start.
void utilisation(const std::vector<NumberedDigest>& traces, FleetReduction& out) {
  std::map<std::int64_t, const FleetDigest*> by_trace;
  for (const auto& t : traces) by_trace[t.trace] = &t.digest;
  struct Bin {
    std::int64_t rank;
    TimeNs aligned_start, bin_ns, busy_ns;
  };
  std::vector<Bin> bins;
  for (std::size_t p = 0; p < out.set.ranks.size(); ++p) {
    const auto& [trace, part] = out.origin[p];
    const FleetDigest& d = *by_trace.at(trace);
    if (part >= d.busy.size()) continue;
    const TimeNs offset = static_cast<TimeNs>(std::llround(out.analysis.offsets[p].offset_ns));
    for (const BusyBin& b : d.busy[part]) bins.push_back({out.set.ranks[p].rank, b.start_ns - offset, d.bin_ns, b.busy_ns});
  }
  if (bins.empty()) return;
  TimeNs t0 = std::numeric_limits<TimeNs>::max();
  for (const auto& b : bins) t0 = std::min(t0, b.aligned_start);
  auto share = [](const Bin& b) { return static_cast<double>(b.busy_ns) / static_cast<double>(b.bin_ns); };

  struct Acc {
    std::int64_t bin_ns = 0;
    std::set<std::int64_t> ranks;
    double sum = 0;
    std::int64_t rows = 0;
    const Bin* least = nullptr;
  };
  std::map<std::int64_t, Acc> by_bin;
  struct RankAcc {
    TimeNs busy = 0, binned = 0;
    std::vector<double> shares;
  };
  std::map<std::int64_t, RankAcc> by_rank;
  for (const auto& b : bins) {
    Acc& a = by_bin[(b.aligned_start - t0) / b.bin_ns];
    if (a.rows == 0) a.bin_ns = b.bin_ns;
    a.ranks.insert(b.rank);
    a.sum += share(b);
    ++a.rows;
    if (!a.least || b.busy_ns < a.least->busy_ns || (b.busy_ns == a.least->busy_ns && b.rank < a.least->rank)) a.least = &b;
    RankAcc& r = by_rank[b.rank];
    r.busy += b.busy_ns;
    r.binned += b.bin_ns;
    r.shares.push_back(share(b));
  }
  for (const auto& [index, a] : by_bin) {
    UtilizationBin u;
    u.bin = index;
    u.bin_ns = a.bin_ns;
    u.ranks = static_cast<std::int64_t>(a.ranks.size());
    u.mean_busy = a.sum / static_cast<double>(a.rows);
    u.min_busy = share(*a.least);
    u.least_busy_rank = a.least->rank;
    out.utilization.push_back(u);
  }
  for (auto& [rank, r] : by_rank) {
    RankUtilization u;
    u.rank = rank;
    u.busy_share = static_cast<double>(r.busy) / static_cast<double>(r.binned);
    u.bins = static_cast<std::int64_t>(r.shares.size());
    u.min_bin_busy = *std::min_element(r.shares.begin(), r.shares.end());
    u.median_bin_busy = median_of(std::move(r.shares));
    out.rank_utilization.push_back(u);
  }
}

}  // namespace

FleetReduction reduce_fleet(std::vector<NumberedDigest> traces, const SkewOptions& options) {
  std::sort(traces.begin(), traces.end(), [](const NumberedDigest& a, const NumberedDigest& b) { return a.trace < b.trace; });
  FleetReduction out;
  // The ranks' digests in trace order, each remembered by (path, process) to find its busy bins
  // once assemble_rank_set has numbered and reordered them.
  std::vector<RankDigest> digests;
  std::map<std::pair<std::string, std::int64_t>, std::deque<std::pair<std::int64_t, std::size_t>>> origins;
  for (auto& t : traces) {
    for (std::size_t part = 0; part < t.digest.ranks.size(); ++part) {
      RankDigest& d = t.digest.ranks[part];
      origins[{d.path, d.global_pid}].emplace_back(t.trace, part);
      digests.push_back(std::move(d));
    }
    t.digest.ranks.clear();
  }
  out.set = assemble_rank_set(std::move(digests));
  for (const auto& d : out.set.ranks) {
    auto& queue = origins.at({d.path, d.global_pid});
    out.origin.push_back(queue.front());
    queue.pop_front();
  }
  out.analysis = analyze_ranks(out.set, options);
  kernel_totals(traces, out);
  utilisation(traces, out);
  return out;
}

}  // namespace kernscope::ranks
