// One trace's fleet digest (see ranks_fleet_digest.hpp).
#include "ranks/ranks_fleet_digest.hpp"

#include <algorithm>
#include <utility>

#include "ranks/collectives.hpp"
#include "kernscope/op_classes.hpp"
#include "analyses/tail.hpp"

namespace kernscope::ranks {

std::vector<BusyBin> busy_bins(const Trace& trace, std::int64_t global_pid, TimeNs first_ns, TimeNs bin_ns) {
  const auto& k = trace.kernels;
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (global_pid != -1 && k.global_pid[i] != global_pid) continue;
    if (k.end_ns[i] > k.start_ns[i]) spans.emplace_back(k.start_ns[i], k.end_ns[i]);
  }
  std::vector<BusyBin> bins;
  if (spans.empty() || bin_ns <= 0) return bins;
  // Overlapping kernels (several streams or devices) count once, so busy time never exceeds the bin.
  const auto merged = merged_intervals(std::move(spans));
  const TimeNs last = merged.back().second;
  const std::size_t count = static_cast<std::size_t>((last - first_ns + bin_ns - 1) / bin_ns);
  bins.resize(std::max<std::size_t>(count, 1));
  for (std::size_t b = 0; b < bins.size(); ++b) bins[b].start_ns = first_ns + static_cast<TimeNs>(b) * bin_ns;
  for (const auto& [start, end] : merged) {
    for (TimeNs t = std::max(start, first_ns); t < end;) {  // time before first_ns is not binned
      const auto b = static_cast<std::size_t>((t - first_ns) / bin_ns);
      const TimeNs bin_end = first_ns + static_cast<TimeNs>(b + 1) * bin_ns;
      const TimeNs upto = std::min(end, bin_end);
      bins[b].busy_ns += upto - t;
      t = upto;
    }
  }
  return bins;
}

Result<FleetDigest> fleet_digest(const std::string& path, TimeNs bin_ns) {
  if (bin_ns <= 0) return make_error(ErrorCode::kInvalidArgument, "the utilisation bin must be positive");
  FleetDigest out;
  out.bin_ns = bin_ns;
  std::optional<Error> failed;
  auto visit = [&](const Trace& trace, const std::vector<RankDigest>& digests) {
    if (trace.kernels.size() > 0) {
      auto tails = tail_statistics(trace, TailSubject::kKernel);
      if (!tails) {
        failed = tails.error();
        return;
      }
      const OpRuleSet& rules = OpRuleSet::builtin();
      for (const TailRow& row : tails->by_total) {
        KernelTotals t;
        t.name = row.name;
        t.op_class = rules.classify(row.name).first;
        t.count = row.count;
        t.total_ns = row.total_ns;
        t.max_ns = row.max_ns;
        t.mean_ns = row.mean_ns;
        t.p50_ns = row.p50_ns;
        t.p95_ns = row.p95_ns;
        t.p99_ns = row.p99_ns;
        out.kernels.push_back(std::move(t));
      }
    }
    for (const auto& d : digests) out.busy.push_back(busy_bins(trace, d.global_pid, d.first_ns, bin_ns));
  };
  auto digests = read_trace_digests(path, visit);
  if (!digests) return std::unexpected(digests.error());  // it names the file
  if (failed) return make_error(failed->code, path + ": " + failed->message);
  out.ranks = std::move(*digests);
  return out;
}

}  // namespace kernscope::ranks
