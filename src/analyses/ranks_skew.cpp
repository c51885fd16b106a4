// Matching, clock offsets, and the wait/transfer split (see ranks_skew.hpp for the model).
#include "analyses/ranks_skew.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace kernscope::ranks {

void StragglerTally::add(const MatchedCollective& m, TimeNs noise_ns) {
  if (m.ranks.size() < 2 || m.lead_ns < noise_ns) return;
  auto& [lead, times] = by_rank_[m.last_rank];
  lead += m.lead_ns;
  ++times;
}

std::pair<std::int64_t, std::int64_t> StragglerTally::top() const {
  std::pair<std::int64_t, std::int64_t> best{-1, 0};
  TimeNs best_lead = -1;
  for (const auto& [rank, tally] : by_rank_) {  // ranks ascending: ties keep the lower rank
    const auto& [lead, times] = tally;
    if (lead > best_lead || (lead == best_lead && times > best.second)) {
      best = {rank, times};
      best_lead = lead;
    }
  }
  return best;
}
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) {
    m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  }
  return m;
}

double mad_of(const std::vector<double>& v, double center) {
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::abs(x - center));
  return median_of(std::move(dev));
}

// One rank's collectives of one communicator, in order.
using GroupItems = std::vector<const Collective*>;

struct Key {
  std::string group;
  bool by_seq = false;
  std::int64_t number = 0;  // seq, or the position on the reference rank
  auto operator<=>(const Key&) const = default;
};

bool same_call(const Collective& a, const Collective& b) {
  return a.kind == b.kind && (a.bytes < 0 || b.bytes < 0 || a.bytes == b.bytes);
}

// Order fallback: how many collectives later (positive) `other`'s window starts than the
// reference's, chosen by how well kinds and sizes agree, then by how steady the end-time
// differences are (a wrong shift pairs collectives whose ends drift apart).
std::int64_t best_shift(const GroupItems& ref, const GroupItems& other, std::int64_t max_shift) {
  struct Score {
    double agree = -1;
    double mad = 0;
  };
  auto score = [&](std::int64_t s) {
    Score sc;
    std::vector<double> diffs;
    std::int64_t pairs = 0, agree = 0;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(ref.size()); ++i) {
      const std::int64_t j = i - s;
      if (j < 0 || j >= static_cast<std::int64_t>(other.size())) continue;
      ++pairs;
      if (same_call(*ref[i], *other[j])) ++agree;
      diffs.push_back(static_cast<double>(other[j]->end_ns - ref[i]->end_ns));
    }
    // At least half the shorter side must pair up, so a shift is not chosen on a handful.
    if (pairs == 0 || pairs * 2 < static_cast<std::int64_t>(std::min(ref.size(), other.size()))) return sc;
    sc.agree = static_cast<double>(agree) / static_cast<double>(pairs);
    sc.mad = mad_of(diffs, median_of(diffs));
    return sc;
  };
  const Score zero = score(0);
  std::int64_t best = 0;
  Score best_score = zero;
  for (std::int64_t s = -max_shift; s <= max_shift; ++s) {
    if (s == 0) continue;
    const Score sc = score(s);
    if (sc.agree < 0) continue;
    const bool better_agreement = sc.agree > best_score.agree + 1e-9;
    // Leave the unshifted pairing only for a clearly steadier one.
    const bool steadier = std::abs(sc.agree - best_score.agree) <= 1e-9 && sc.mad * 2 < best_score.mad;
    if (better_agreement || steadier) {
      best = s;
      best_score = sc;
    }
  }
  return best;
}

}  // namespace

RanksAnalysis analyze_ranks(const RankSet& set, const SkewOptions& options) {
  RanksAnalysis out;
  const std::size_t n = set.ranks.size();
  out.offsets.resize(n);
  for (std::size_t p = 0; p < n; ++p) out.offsets[p].rank = set.ranks[p].rank;
  if (n == 0) return out;

  // The reference: the lowest rank that ran collectives.
  std::size_t ref = 0;
  while (ref < n && set.ranks[ref].collectives.items.empty()) ++ref;
  if (ref == n) {
    out.notes.push_back("no rank ran NCCL collectives: nothing to match");
    return out;
  }
  out.reference_rank = set.ranks[ref].rank;

  // Per rank: communicator -> its collectives in order.
  std::vector<std::map<std::string, GroupItems>> groups(n);
  for (std::size_t p = 0; p < n; ++p) {
    for (const auto& c : set.ranks[p].collectives.items) groups[p][c.group].push_back(&c);
  }
  std::set<std::string> group_names;
  for (const auto& g : groups) {
    for (const auto& [name, items] : g) group_names.insert(name);
  }

  // Keys: by sequence number where every rank's collectives of a group carry one, else by order
  // (with each rank's shift against the reference).
  std::map<Key, std::vector<const Collective*>> matched;
  std::int64_t seq_groups = 0, order_groups = 0, shifted = 0;
  for (const auto& name : group_names) {
    bool all_seq = true;
    for (std::size_t p = 0; p < n; ++p) {
      auto it = groups[p].find(name);
      if (it == groups[p].end()) continue;
      for (const auto* c : it->second) all_seq = all_seq && c->seq >= 0;
    }
    all_seq ? ++seq_groups : ++order_groups;
    const auto ref_it = groups[ref].find(name);
    for (std::size_t p = 0; p < n; ++p) {
      auto it = groups[p].find(name);
      if (it == groups[p].end()) continue;
      std::int64_t shift = 0;
      if (!all_seq && p != ref && ref_it != groups[ref].end()) {
        shift = best_shift(ref_it->second, it->second, options.max_shift);
        if (shift != 0) {
          ++shifted;
          out.notes.push_back("rank " + std::to_string(set.ranks[p].rank) + ", " + name + ": its trace starts " +
                              std::to_string(std::abs(shift)) + " collective(s) " + (shift > 0 ? "later" : "earlier") +
                              " than the reference's (matched by order with that shift)");
        }
      }
      for (std::size_t j = 0; j < it->second.size(); ++j) {
        const Collective* c = it->second[j];
        Key key{name, all_seq, all_seq ? c->seq : static_cast<std::int64_t>(j) + shift};
        auto& slot = matched[key];
        if (slot.empty()) slot.assign(n, nullptr);
        if (!slot[p]) slot[p] = c;
      }
    }
  }
  if (order_groups == 0) {
    out.matching = "by identity: communicator and sequence number from the traces";
  } else {
    out.matching = seq_groups > 0 ? "by sequence number in " + std::to_string(seq_groups) + " communicator(s), by order in " + std::to_string(order_groups)
                                  : "by order within each communicator (the traces carry no sequence numbers)";
    if (shifted > 0) out.matching += "; " + std::to_string(shifted) + " rank window(s) shifted to line up";
  }

  // Clock offsets from the ends of collectives seen on both the reference and the rank.
  std::vector<double> min_durations;
  for (const auto& [key, slot] : matched) {
    TimeNs shortest = -1;
    bool complete = true;
    for (const auto* c : slot) {
      if (!c) {
        complete = false;
        break;
      }
      const TimeNs d = c->end_ns - c->start_ns;
      shortest = shortest < 0 ? d : std::min(shortest, d);
    }
    if (complete && shortest >= 0) min_durations.push_back(static_cast<double>(shortest));
  }
  const double typical_transfer = median_of(min_durations);
  const double trust_limit = std::max(5000.0, 0.1 * typical_transfer);
  out.clocks_trusted = true;
  // Kernels of an all-reduce, all-gather, reduce-scatter, broadcast or reduce end together; those
  // of send/receive (and all-to-all built from them) end when each rank's own transfers do.
  auto ends_together = [](const Collective& c) {
    return c.kind != CollectiveKind::kSendRecv && c.kind != CollectiveKind::kAllToAll && c.kind != CollectiveKind::kOther;
  };
  auto end_differences = [&](std::size_t p, bool together_only) {
    std::vector<double> diffs;
    for (const auto& [key, slot] : matched) {
      if (slot[p] && slot[ref] && (!together_only || ends_together(*slot[ref]))) {
        diffs.push_back(static_cast<double>(slot[p]->end_ns - slot[ref]->end_ns));
      }
    }
    return diffs;
  };
  for (std::size_t p = 0; p < n; ++p) {
    ClockOffset& o = out.offsets[p];
    if (p == ref) {
      o.trusted = true;
      o.why = "reference";
      continue;
    }
    std::vector<double> diffs = end_differences(p, true);
    const bool point_to_point = diffs.size() < 3;
    if (point_to_point) diffs = end_differences(p, false);
    o.samples = static_cast<std::int64_t>(diffs.size());
    if (diffs.empty()) {
      o.why = "no collective in common with the reference: clock unknown";
      out.clocks_trusted = false;
      continue;
    }
    o.end_difference_ns = median_of(diffs);
    // Ranks of one file share its clock: the difference is then what "ends together" is worth.
    o.shared_clock = set.ranks[p].path == set.ranks[ref].path;
    const double applied = options.estimate_clocks && !o.shared_clock ? o.end_difference_ns : 0.0;
    o.offset_ns = applied;
    o.spread_ns = mad_of(diffs, o.end_difference_ns);
    if (o.shared_clock) {
      o.trusted = true;
      o.why = "same file as the reference: one clock, no offset applied";
    } else if (o.samples < 3) {
      o.why = "fewer than 3 collectives in common";
    } else if (o.spread_ns > trust_limit) {
      o.why = "collective ends scatter by " + std::to_string(static_cast<std::int64_t>(o.spread_ns)) +
              " ns (more than " + std::to_string(static_cast<std::int64_t>(trust_limit)) + " ns): clocks drift or matching is wrong";
    } else {
      o.trusted = true;
      if (point_to_point) o.why = "from send/receive ends (they need not end together: less exact)";
    }
    if (!o.trusted) out.clocks_trusted = false;
  }
  double worst_spread = 0;
  for (const auto& o : out.offsets) worst_spread = std::max(worst_spread, o.spread_ns);
  out.noise_ns = static_cast<TimeNs>(std::max(2000.0, 3 * worst_spread));
  if (!options.estimate_clocks) out.notes.push_back("clocks taken as they are (no offset applied)");
  if (!out.clocks_trusted) out.notes.push_back("clocks cannot be trusted for every rank: skew figures below may be clock error");

  // Per matched collective, on aligned clocks.
  auto aligned = [&](std::size_t p, TimeNs t) { return t - static_cast<TimeNs>(std::llround(out.offsets[p].offset_ns)); };
  for (const auto& [key, slot] : matched) {
    MatchedCollective m;
    m.group = key.group;
    m.seq = key.by_seq ? key.number : -1;
    m.index = key.number;
    const Collective* first = nullptr;
    std::vector<double> ends;
    for (std::size_t p = 0; p < n; ++p) {
      const Collective* c = slot[p];
      if (!c) {
        m.missing.push_back(p);
        continue;
      }
      if (!first) first = c;
      if (!same_call(*first, *c)) m.kinds_differ = true;
      m.ranks.push_back(p);
      m.arrival.push_back(aligned(p, c->start_ns));
      m.end.push_back(aligned(p, c->end_ns));
      // Relative to the first end: absolute times (~1.7e18 ns) in a double lose up to 256 ns.
      ends.push_back(static_cast<double>(m.end.back() - m.end.front()));
      m.bytes = std::max(m.bytes, c->bytes);
      m.group_size = std::max(m.group_size, c->group_size);
    }
    m.kind = first->kind;
    m.step = (slot[ref] ? slot[ref] : first)->step;
    m.window = (slot[ref] ? slot[ref] : first)->window;
    m.layer = (slot[ref] ? slot[ref] : first)->layer;
    m.algorithm = first->algorithm;
    m.protocol = first->protocol;
    m.dtype = first->dtype;
    m.first_arrival = *std::min_element(m.arrival.begin(), m.arrival.end());
    m.last_arrival = *std::max_element(m.arrival.begin(), m.arrival.end());
    m.spread_ns = m.last_arrival - m.first_arrival;
    m.end_ns = m.end.front() + static_cast<TimeNs>(std::llround(median_of(ends)));
    m.transfer_ns = std::max<TimeNs>(0, m.end_ns - m.last_arrival);
    double wait_sum = 0;
    for (TimeNs a : m.arrival) wait_sum += static_cast<double>(m.last_arrival - a);
    m.mean_wait_ns = wait_sum / static_cast<double>(m.arrival.size());
    // The last to arrive, and by how much it trailed the second-last.
    std::size_t last = 0;
    for (std::size_t i = 1; i < m.arrival.size(); ++i) {
      if (m.arrival[i] > m.arrival[last]) last = i;
    }
    TimeNs second = m.first_arrival;
    for (std::size_t i = 0; i < m.arrival.size(); ++i) {
      if (i != last) second = std::max(second, m.arrival[i]);
    }
    m.lead_ns = m.arrival.size() > 1 ? m.last_arrival - second : 0;
    m.last_rank = set.ranks[m.ranks[last]].rank;
    const std::int64_t participants = m.group_size > 0 ? m.group_size : static_cast<std::int64_t>(m.ranks.size());
    // nccl-tests' definitions with the transfer (last arrival -> end) as the time: waiting for a
    // late rank is not the link's time.
    if (m.bytes > 0 && m.transfer_ns > 0) {
      m.algorithm_bandwidth = static_cast<double>(m.bytes) / (static_cast<double>(m.transfer_ns) * 1e-9);
      m.bus_bandwidth = m.algorithm_bandwidth * bus_bandwidth_factor(m.kind, participants);
    }
    if (!m.missing.empty()) {
      for (std::size_t p : m.missing) {
        const auto& r = set.ranks[p];
        if (r.collectives.items.empty()) {
          m.missing_why.push_back("no NCCL kernels in its trace");
        } else if (aligned(p, r.last_ns) < m.first_arrival) {
          m.missing_why.push_back("its trace ends before");
        } else if (aligned(p, r.first_ns) > m.last_arrival) {
          m.missing_why.push_back("its trace starts after");
        } else {
          m.missing_why.push_back("did not arrive");
        }
      }
      out.incomplete.push_back(std::move(m));
    } else {
      out.collectives.push_back(std::move(m));
    }
  }
  auto by_arrival = [](const MatchedCollective& a, const MatchedCollective& b) { return a.first_arrival < b.first_arrival; };
  std::sort(out.collectives.begin(), out.collectives.end(), by_arrival);
  std::sort(out.incomplete.begin(), out.incomplete.end(), by_arrival);
  std::int64_t differ = 0;
  for (const auto& m : out.collectives) differ += m.kinds_differ ? 1 : 0;
  if (differ > 0) {
    out.notes.push_back(std::to_string(differ) + " matched collective(s) differ in kind or size across ranks: order matching may be wrong there");
  }

  // Hang analysis: who did not arrive, where the rank's trace still runs.
  std::map<std::int64_t, std::int64_t> not_arrived;
  for (const auto& m : out.incomplete) {
    for (std::size_t i = 0; i < m.missing.size(); ++i) {
      if (m.missing_why[i] == "did not arrive") ++not_arrived[set.ranks[m.missing[i]].rank];
    }
  }
  for (const auto& [rank, count] : not_arrived) {
    out.notes.push_back("rank " + std::to_string(rank) + " did not arrive at " + std::to_string(count) +
                        " collective(s) the others ran while its trace was still recording (hang or divergent code path?)");
  }

  // Per kind.
  std::map<CollectiveKind, std::vector<const MatchedCollective*>> by_kind;
  for (const auto& m : out.collectives) by_kind[m.kind].push_back(&m);
  for (const auto& [kind, list] : by_kind) {
    KindRow row;
    row.kind = kind;
    std::vector<double> spreads, transfers, bandwidths, algorithm, sizes;
    for (const auto* m : list) {
      ++row.count;
      row.wait_ns += m->mean_wait_ns;
      row.transfer_ns += m->transfer_ns;
      if (m->bytes > 0) {
        row.bytes += m->bytes;
        ++row.sized;
        sizes.push_back(static_cast<double>(m->bytes));
      }
      spreads.push_back(static_cast<double>(m->spread_ns));
      transfers.push_back(static_cast<double>(m->transfer_ns));
      if (m->bus_bandwidth > 0) {
        bandwidths.push_back(m->bus_bandwidth);
        algorithm.push_back(m->algorithm_bandwidth);
        row.max_bus_bandwidth = std::max(row.max_bus_bandwidth, m->bus_bandwidth);
      }
    }
    row.median_spread_ns = median_of(spreads);
    row.median_transfer_ns = median_of(transfers);
    row.median_bus_bandwidth = median_of(bandwidths);
    row.median_algorithm_bandwidth = median_of(algorithm);
    row.median_bytes = static_cast<std::int64_t>(std::llround(median_of(sizes)));
    out.kinds.push_back(row);
  }
  std::sort(out.kinds.begin(), out.kinds.end(), [](const KindRow& a, const KindRow& b) {
    return a.wait_ns + static_cast<double>(a.transfer_ns) > b.wait_ns + static_cast<double>(b.transfer_ns);
  });

  // Sizes and the link: what bus bandwidth can be read against.
  {
    std::int64_t sized = 0;
    for (const auto& m : out.collectives) sized += m.bytes > 0 ? 1 : 0;
    if (out.collectives.empty()) {
      out.sizes_note = "no matched collectives";
    } else if (sized == 0) {
      out.sizes_note = "no sizes: no collective in the traces carries its message size (Kineto's record_param_comms "
                       "arguments \"In msg nelems\" / \"Out msg nelems\" with dtype), so no bandwidth";
    } else {
      out.sizes_note = "sizes of " + std::to_string(sized) + " of " + std::to_string(out.collectives.size()) +
                       " collectives from the traces' collective arguments (elements x dtype bytes)";
    }
    // Each device name once: its row (or none), and how many ranks ran on it.
    std::map<std::string, std::pair<std::optional<LinkPeak>, std::int64_t>> by_name;
    for (const auto& r : set.ranks) {
      auto [it, added] = by_name.try_emplace(r.device_name, std::nullopt, 0);
      if (added && !r.device_name.empty()) it->second.first = match_link_peak(r.device_name, builtin_link_peaks());
      ++it->second.second;
    }
    std::string devices;
    for (const auto& [name, entry] : by_name) {
      const auto& [row, count] = entry;
      if (row && (!out.link || row->bytes_per_s < out.link->bytes_per_s)) out.link = row;
      devices += (devices.empty() ? "" : "; ") + (name.empty() ? std::string("no device name in the trace") : "'" + name + "'") +
                 " on " + std::to_string(count) + " rank(s)" + (row ? " -> " + row->name : name.empty() ? "" : ": no row in data/link_peaks.tsv");
    }
    if (out.link) {
      out.link_note = out.link->name + ", " + out.link->link + ": " +
                      std::to_string(static_cast<std::int64_t>(std::llround(out.link->bytes_per_s / 1e9))) +
                      " GB/s per direction per GPU (data/link_peaks.tsv line " + std::to_string(out.link->line) + "; " +
                      (by_name.size() > 1 ? "the lowest of " : "") + devices + ")";
    } else {
      out.link_note = "no link peak (" + devices + ")";
    }
  }

  // Per rank, and stragglers.
  std::vector<StragglerRow> stragglers(n);
  out.ranks.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    const auto& r = set.ranks[p];
    stragglers[p].rank = r.rank;
    RankRow& row = out.ranks[p];
    row.rank = r.rank;
    row.evidence = r.evidence;
    row.path = r.path;
    row.collectives = static_cast<std::int64_t>(r.collectives.items.size());
    row.comm_ns = r.collectives.comm_ns;
    row.overlap_ns = r.collectives.overlap_ns;
    row.compute_ns = r.collectives.compute_ns;
    row.first_ns = aligned(p, r.first_ns);
    row.last_ns = aligned(p, r.last_ns);
  }
  for (const auto& m : out.collectives) {
    for (std::size_t i = 0; i < m.ranks.size(); ++i) {
      out.ranks[m.ranks[i]].wait_ns += static_cast<double>(m.last_arrival - m.arrival[i]);
      ++stragglers[m.ranks[i]].collectives;
    }
    if (m.ranks.size() < 2 || m.lead_ns < out.noise_ns) continue;
    for (std::size_t i = 0; i < m.ranks.size(); ++i) {
      if (m.arrival[i] != m.last_arrival) continue;
      StragglerRow& s = stragglers[m.ranks[i]];
      ++s.times_last;
      s.total_lead_ns += m.lead_ns;
      s.wait_caused_ns += static_cast<TimeNs>(std::llround(m.mean_wait_ns * static_cast<double>(m.ranks.size())));
      ++out.ranks[m.ranks[i]].times_last;
      break;
    }
  }
  for (const auto& s : stragglers) {
    if (s.times_last > 0) out.stragglers.push_back(s);
  }
  std::sort(out.stragglers.begin(), out.stragglers.end(), [](const StragglerRow& a, const StragglerRow& b) {
    return a.times_last != b.times_last ? a.times_last > b.times_last : a.wait_caused_ns > b.wait_caused_ns;
  });

  // Per profiler step.
  std::map<std::int64_t, std::vector<const MatchedCollective*>> by_step;
  for (const auto& m : out.collectives) {
    if (m.step >= 0) by_step[m.step].push_back(&m);
  }
  for (const auto& [step, list] : by_step) {
    StepRow row;
    row.step = step;
    std::vector<double> spreads;
    StragglerTally lasts;
    for (const auto* m : list) {
      ++row.collectives;
      row.wait_ns += m->mean_wait_ns;
      row.transfer_ns += m->transfer_ns;
      spreads.push_back(static_cast<double>(m->spread_ns));
      row.max_spread_ns = std::max(row.max_spread_ns, m->spread_ns);
      lasts.add(*m, out.noise_ns);
    }
    row.median_spread_ns = median_of(spreads);
    std::tie(row.top_straggler, row.top_straggler_times) = lasts.top();
    out.steps.push_back(row);
  }

  // Skew over time: bins of equal length over the matched collectives' span.
  if (!out.collectives.empty() && options.time_bins > 0) {
    const TimeNs t0 = out.collectives.front().first_arrival;
    TimeNs t1 = t0;
    for (const auto& m : out.collectives) t1 = std::max(t1, m.last_arrival);
    const TimeNs width = std::max<TimeNs>(1, (t1 - t0) / options.time_bins + 1);
    out.bins.resize(static_cast<std::size_t>(options.time_bins));
    std::vector<std::vector<double>> spreads(out.bins.size());
    std::vector<StragglerTally> lasts(out.bins.size());
    for (std::size_t b = 0; b < out.bins.size(); ++b) {
      out.bins[b].start_ns = static_cast<TimeNs>(b) * width;
      out.bins[b].end_ns = static_cast<TimeNs>(b + 1) * width;
    }
    for (const auto& m : out.collectives) {
      const std::size_t b = std::min(out.bins.size() - 1, static_cast<std::size_t>((m.last_arrival - t0) / width));
      ++out.bins[b].collectives;
      spreads[b].push_back(static_cast<double>(m.spread_ns));
      out.bins[b].max_spread_ns = std::max(out.bins[b].max_spread_ns, m.spread_ns);
      lasts[b].add(m, out.noise_ns);
    }
    for (std::size_t b = 0; b < out.bins.size(); ++b) {
      out.bins[b].median_spread_ns = median_of(spreads[b]);
      std::tie(out.bins[b].top_straggler, out.bins[b].top_straggler_times) = lasts[b].top();
    }
  }
  return out;
}

}  // namespace kernscope::ranks
