// Matching, clock offsets, and the wait/transfer split (see ranks_skew.hpp for the model).
#include "ranks/ranks_skew.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
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

namespace {

double mad_of(const std::vector<double>& v, double center) {
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::abs(x - center));
  return median_of(std::move(dev));
}

// One rank's collectives of one communicator, in order, with what identifies a call beyond its kind.
struct Item {
  const Collective* c = nullptr;
  int width = 0;  // bytes per element of its dtype, 0 unknown
};
using GroupItems = std::vector<Item>;

struct Key {
  std::string group;
  bool by_seq = false;
  std::int64_t number = 0;  // seq, or the position on the group's reference rank
  auto operator<=>(const Key&) const = default;
};

// Kernels of an all-reduce, all-gather, reduce-scatter, broadcast or reduce end together; those of
// send/receive (and all-to-all built from them) end when each rank's own transfers do.
bool ends_together(const Collective& c) {
  return c.kind != CollectiveKind::kSendRecv && c.kind != CollectiveKind::kAllToAll && c.kind != CollectiveKind::kOther;
}

// Two ranks' records of one call agree on what it was: its kind, and its size, element width,
// algorithm, protocol and communicator size wherever both traces say.
bool same_call(const Item& x, const Item& y) {
  const Collective& a = *x.c;
  const Collective& b = *y.c;
  auto agree = [](const std::string& u, const std::string& v) { return u.empty() || v.empty() || u == v; };
  return a.kind == b.kind && (a.bytes < 0 || b.bytes < 0 || a.bytes == b.bytes) && (x.width == 0 || y.width == 0 || x.width == y.width) &&
         agree(a.algorithm, b.algorithm) && agree(a.protocol, b.protocol) &&
         (a.group_size <= 0 || b.group_size <= 0 || a.group_size == b.group_size);
}

// Order matching with `other`'s k-th collective paired with `ref`'s (k + shift)-th, judged by what
// identifies a call: do the pairs agree on what they were, and do their ends agree? The same call's
// kernels end within microseconds of each other (send/receive within tens), while collectives follow
// each other by far more; so each pair's ends must differ by less than a quarter of the gap to a
// neighbouring collective's end (at the ends of the window the one neighbour's gap is the scale on
// both sides). How the ends are compared:
//  - kOneClock: ranks of one file, one clock: as they read;
//  - kAsRead: files whose clocks agree: as they read, and each pair within 2 clock trust limits where
//    the kernels end together, 8 where not (on the real exports of tests/fixtures/ranks the same
//    all-reduce's ends lie within 1, send/receive ends within 3; a clock offset near a whole gap
//    between collectives would otherwise pass for a shift);
//  - kFitted: after an offset fitted to the pairs (their median end difference), each pair within
//    those bounds of it and all steady (median absolute deviation within the limit, as for the clock
//    offsets).
enum class Ends { kOneClock, kAsRead, kFitted };

struct Alignment {
  std::int64_t shift = 0;
  Ends ends = Ends::kOneClock;
  bool same_length = false;  // both sides hold as many collectives
  std::int64_t pairs = 0, disagree = 0, far = 0;
  std::int64_t bad = 0;  // pairs that disagree or lie far apart
  double median = 0, mad = 0, limit = 0;
  // The pairs an alignment needs: as the clocks read, 3 for a shift; fitted, 8 for a shift or for
  // windows of unequal length (3 or 4 pairs of a periodic run line up by chance one time in twenty on
  // the real exports cut into windows), else 1.
  std::int64_t min_pairs() const {
    if (ends != Ends::kFitted) return shift == 0 ? 1 : 3;
    return shift == 0 && same_length ? 1 : 8;
  }
  bool plausible() const { return pairs >= min_pairs() && disagree == 0 && far == 0 && (ends != Ends::kFitted || mad <= limit); }
  std::string failure() const {
    auto ns = [](double v) { return std::to_string(static_cast<std::int64_t>(v)) + " ns"; };
    if (disagree > 0) return std::to_string(disagree) + " of " + std::to_string(pairs) + " pairs differ in kind or size";
    if (far > 0) return std::to_string(far) + " of " + std::to_string(pairs) + " pairs' ends lie apart (as far as to another collective's)";
    if (ends == Ends::kFitted && mad > limit) return "the pairs' ends scatter by " + ns(mad) + " (more than " + ns(limit) + ")";
    return pairs == 0 ? "no pairs" : "only " + std::to_string(pairs) + " pair(s) (" + std::to_string(min_pairs()) + " needed)";
  }
};

// `full`: count every pair (for `bad` and the message), or until more than `bad_limit` (when not
// negative) are bad (then `bad` reads every pair); else stop at the first pair that rules the
// alignment out.
Alignment align(const GroupItems& ref, const GroupItems& other, std::int64_t shift, Ends ends, bool full = true,
                std::int64_t bad_limit = -1) {
  Alignment a;
  a.shift = shift;
  a.ends = ends;
  a.same_length = ref.size() == other.size();
  const std::int64_t nr = static_cast<std::int64_t>(ref.size());
  const std::int64_t lo = std::max<std::int64_t>(0, shift);
  const std::int64_t hi = std::min<std::int64_t>(nr, static_cast<std::int64_t>(other.size()) + shift);
  if (hi <= lo) return a;
  a.pairs = hi - lo;
  if (!full && a.pairs < a.min_pairs()) return a;
  std::vector<double> diffs, shortest;
  std::vector<bool> bad;
  diffs.reserve(static_cast<std::size_t>(a.pairs));
  shortest.reserve(static_cast<std::size_t>(a.pairs));
  for (std::int64_t i = lo; i < hi; ++i) {
    const Item& r = ref[static_cast<std::size_t>(i)];
    const Item& o = other[static_cast<std::size_t>(i - shift)];
    bad.push_back(!same_call(r, o));
    if (bad.back()) {
      ++a.disagree;
      if (bad_limit >= 0 && a.disagree > bad_limit) a.bad = a.pairs;
      if (!full || a.bad == a.pairs) return a;
    }
    diffs.push_back(static_cast<double>(o.c->end_ns - r.c->end_ns));
    shortest.push_back(static_cast<double>(std::min(r.c->end_ns - r.c->start_ns, o.c->end_ns - o.c->start_ns)));
  }
  // The gap test first (it needs no limit; most wrong shifts fail it at once), then the bound.
  a.bad = a.disagree;
  if (ends == Ends::kFitted) a.median = median_of(diffs);
  const double center = ends == Ends::kFitted ? a.median : 0.0;
  std::vector<bool> far(bad.size(), false);
  auto count = [&](std::size_t j) {
    ++a.far;
    if (!bad[j]) ++a.bad;
    if (bad_limit >= 0 && a.bad > bad_limit) a.bad = a.pairs;
    return !full || a.bad == a.pairs;  // stop
  };
  for (std::int64_t i = lo; i < hi; ++i) {
    const std::size_t j = static_cast<std::size_t>(i - lo);
    const double residual = std::abs(diffs[j] - center);
    for (const std::int64_t k : {i - 1, i + 1}) {
      if (far[j] || k < 0 || k >= nr) continue;
      const double gap = std::abs(static_cast<double>(ref[static_cast<std::size_t>(k)].c->end_ns - ref[static_cast<std::size_t>(i)].c->end_ns));
      far[j] = 4 * residual >= gap;
    }
    if (far[j] && count(j)) return a;
  }
  a.limit = std::max(5000.0, 0.1 * median_of(std::move(shortest)));
  for (std::int64_t i = lo; i < hi && ends != Ends::kOneClock; ++i) {
    const std::size_t j = static_cast<std::size_t>(i - lo);
    const double bound = (ends_together(*ref[static_cast<std::size_t>(i)].c) ? 2 : 8) * a.limit;
    if (!far[j] && std::abs(diffs[j] - center) > bound) {
      far[j] = true;
      if (count(j)) return a;
    }
  }
  if (ends != Ends::kFitted) a.median = median_of(diffs);
  a.mad = mad_of(diffs, a.median);
  return a;
}

struct ShiftChoice {
  std::int64_t shift = 0;
  std::string doubt;  // empty: trusted
};

// The plausible alignments within +-max_shift (and the unshifted one, to say why none is).
struct Candidates {
  std::vector<Alignment> plausible;  // steadiest first
  Alignment unshifted;
};

Candidates candidates(const GroupItems& ref, const GroupItems& other, std::int64_t max_shift, Ends ends) {
  Candidates out;
  for (std::int64_t s = -max_shift; s <= max_shift; ++s) {
    Alignment a = align(ref, other, s, ends, s == 0);
    if (s == 0) out.unshifted = a;
    if (a.plausible()) out.plausible.push_back(a);
  }
  std::sort(out.plausible.begin(), out.plausible.end(), [](const Alignment& a, const Alignment& b) {
    return a.mad != b.mad ? a.mad < b.mad : std::abs(a.shift) < std::abs(b.shift);
  });
  return out;
}

// One plausible alignment, or of several the steadiest where it wins clearly (a quarter of every
// other's scatter, on as many pairs: a few pairs' scatter says little). None: unshifted, not trusted;
// several alike: not trusted either.
ShiftChoice pick(const Candidates& c, std::int64_t max_shift) {
  ShiftChoice out;
  const auto& p = c.plausible;
  if (p.empty()) {
    out.doubt = "its collectives do not line up: unshifted, " + c.unshifted.failure() + ", and no shift within +-" +
                std::to_string(max_shift) + " collectives does better; matched unshifted";
    return out;
  }
  out.shift = p[0].shift;
  bool clear = true;
  for (std::size_t k = 1; k < p.size(); ++k) clear = clear && p[0].mad * 4 <= p[k].mad && p[k].mad > 0 && p[0].pairs >= p[k].pairs;
  if (!clear) {
    for (const auto& a : p) {
      if (a.shift == 0) out.shift = 0;
    }
    out.doubt = "shifts " + std::to_string(p[0].shift) + " and " + std::to_string(p[1].shift) +
                " both line its collectives up (same kinds and sizes, ends agreeing: a periodic run seen through windows that "
                "start at different collectives?): which is right cannot be told; matched with shift " + std::to_string(out.shift);
  }
  return out;
}

// Whether `items` mostly line up with themselves `lag` collectives apart after a fitted offset (4
// agreeing pairs or more, three in four of them, steady): a run that repeats every `lag` collectives
// but for a few (a delayed step). Few pairs suffice: a short window must still show a step's period.
bool repeats_every(const GroupItems& items, std::int64_t lag) {
  const std::int64_t pairs = static_cast<std::int64_t>(items.size()) - lag;
  if (pairs < 4) return false;
  const Alignment a = align(items, items, lag, Ends::kFitted, true, pairs / 4);
  return a.pairs - a.bad >= 4 && a.bad * 4 <= a.pairs && a.mad <= a.limit;
}

// The shift that lines `other` up with `ref` (see Alignment): in one export as the clock reads; across
// files as the clocks read where that lines them up (their clocks agree), else with a fitted offset.
// Across files a run that repeats every L collectives may line up as well at s + L or s - L (with the
// clocks off by the period, even as read): a shift s is then trusted only where those alternatives
// are refuted, tried with a fitted offset on 8 pairs or more and not lining up. A run seen whole on
// every rank, or windows that start at the same collective (one profiler schedule; a rank that hung or
// was cut ends early), stay unshifted. A shift that makes kinds or sizes disagree is never taken.
ShiftChoice choose_shift(const GroupItems& ref, const GroupItems& other, std::int64_t max_shift, bool one_file) {
  const Candidates as_read = candidates(ref, other, max_shift, one_file ? Ends::kOneClock : Ends::kAsRead);
  if (one_file) return pick(as_read, max_shift);
  const bool read = !as_read.plausible.empty();
  ShiftChoice out = pick(read ? as_read : candidates(ref, other, max_shift, Ends::kFitted), max_shift);
  if (!out.doubt.empty() || out.shift == 0) return out;
  for (std::int64_t lag = 1; lag <= max_shift; ++lag) {
    if (!repeats_every(ref, lag) && !repeats_every(other, lag)) continue;
    for (const std::int64_t alternative : {out.shift - lag, out.shift + lag}) {
      const Alignment a = align(ref, other, alternative, Ends::kFitted, false);
      if (a.pairs >= 8 && !a.plausible()) continue;  // refuted
      out.doubt = "its collectives line up with shift " + std::to_string(out.shift) + (read ? " as the clocks read" : " after a clock offset fitted to them") +
                  ", but the run repeats every " + std::to_string(lag) + " collective(s) and the files' clocks are not known to agree: " +
                  "shift " + std::to_string(alternative) + " is not ruled out (" +
                  (a.pairs < 8 ? "only " + std::to_string(a.pairs) + " pair(s) there" : "it lines up as well") + "); matched with shift " +
                  std::to_string(out.shift);
      return out;
    }
  }
  return out;
}

// At most `limit` of `notes` (of one kind), their texts led by `prefix`, then a note of that kind
// saying how many more (and counting them).
void append_capped(std::vector<Note>& out, const std::vector<Note>& notes, const std::string& prefix, std::size_t limit = 8) {
  for (std::size_t i = 0; i < notes.size() && i < limit; ++i) out.push_back(note_from(prefix, notes[i]));
  if (notes.size() > limit) {
    const std::size_t more = notes.size() - limit;
    out.push_back({notes.front().kind, notes.front().severity, prefix + "... and " + std::to_string(more) + " more",
                   static_cast<std::int64_t>(more)});
  }
}

// Each matched collective's records, one slot per rank (null where the rank has none).
using Matched = std::map<Key, std::vector<const Collective*>>;

// A time on rank p's clock moved onto the reference's by its offset.
TimeNs aligned(const RanksAnalysis& out, std::size_t p, TimeNs t) {
  return t - static_cast<TimeNs>(std::llround(out.offsets[p].offset_ns));
}

// The collectives matched across ranks (`out.matching` says how; doubts about it go to `matching_doubts`).
Matched match_collectives(const RankSet& set, std::size_t ref, const SkewOptions& options, RanksAnalysis& out,
                          std::vector<std::string>& matching_doubts) {
  const std::size_t n = set.ranks.size();
  // Per rank: communicator -> its collectives in order.
  std::vector<std::map<std::string, GroupItems>> groups(n);
  for (std::size_t p = 0; p < n; ++p) {
    for (const auto& c : set.ranks[p].collectives.items) groups[p][c.group].push_back({&c, dtype_bytes(c.dtype)});
  }
  std::set<std::string> group_names;
  for (const auto& g : groups) {
    for (const auto& [name, items] : g) group_names.insert(name);
  }

  // Keys: by sequence number where every rank's collectives of a group carry one, else by order,
  // each rank shifted against the group's reference (the lowest rank that ran the group) where that
  // lines their calls up (choose_shift).
  Matched matched;
  std::int64_t seq_groups = 0, order_groups = 0, shifted = 0;
  for (const auto& name : group_names) {
    bool all_seq = true;
    std::size_t group_ref = n;
    for (std::size_t p = 0; p < n; ++p) {
      auto it = groups[p].find(name);
      if (it == groups[p].end()) continue;
      if (group_ref == n) group_ref = p;
      for (const auto& item : it->second) all_seq = all_seq && item.c->seq >= 0;
    }
    all_seq ? ++seq_groups : ++order_groups;
    const GroupItems& ref_items = groups[group_ref].at(name);
    const std::string against = group_ref == ref ? "the reference's" : "rank " + std::to_string(set.ranks[group_ref].rank) + "'s";
    for (std::size_t p = 0; p < n; ++p) {
      auto it = groups[p].find(name);
      if (it == groups[p].end()) continue;
      std::int64_t shift = 0;
      if (!all_seq && p != group_ref) {
        const bool one_file = set.ranks[p].path == set.ranks[group_ref].path;
        const ShiftChoice choice = choose_shift(ref_items, it->second, options.max_shift, one_file);
        shift = choice.shift;
        const std::string who = "rank " + std::to_string(set.ranks[p].rank) + ", " + name + ": ";
        if (!choice.doubt.empty()) matching_doubts.push_back(who + "against " + against + " collectives, " + choice.doubt);
        if (shift != 0) {
          ++shifted;
          out.windows.push_back({"window_shifted", NoteSeverity::kDataLoss,
                                 who + "its trace starts " + std::to_string(std::abs(shift)) + " collective(s) " +
                                     (shift > 0 ? "later" : "earlier") + " than " + against + " (matched by order with that shift)",
                                 std::abs(shift)});
        }
      }
      for (std::size_t j = 0; j < it->second.size(); ++j) {
        const Collective* c = it->second[j].c;
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
  // Whatever matched them, ranks' records of one collective must agree on what it was.
  std::int64_t differ = 0;
  for (const auto& [key, slot] : matched) {
    const Collective* first = nullptr;
    for (const auto* c : slot) {
      if (!c) continue;
      if (!first) {
        first = c;
      } else if (!same_call({first, dtype_bytes(first->dtype)}, {c, dtype_bytes(c->dtype)})) {
        ++differ;
        break;
      }
    }
  }
  if (differ > 0) {
    matching_doubts.push_back(std::to_string(differ) + " matched collective(s) differ in kind or size across ranks (" +
                              (order_groups > 0 ? "order matching went wrong there" : "the traces' sequence numbers disagree") + ")");
  }
  out.matching_trusted = matching_doubts.empty();
  return matched;
}

// Each rank's clock offset against the reference, from the ends of the collectives both ran, and
// whether it can be trusted; the noise under which a rank's lead is no straggling.
void estimate_offsets(const RankSet& set, std::size_t ref, const Matched& matched, const SkewOptions& options, RanksAnalysis& out) {
  const std::size_t n = set.ranks.size();
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
    } else if (!options.estimate_clocks && !point_to_point && std::abs(o.end_difference_ns) > trust_limit) {
      // Taken as they are (--clocks trust), the clocks must agree where the kernels end together.
      o.why = "clocks taken as they are, but collective ends differ by " + std::to_string(static_cast<std::int64_t>(o.end_difference_ns)) +
              " ns (more than " + std::to_string(static_cast<std::int64_t>(trust_limit)) + " ns): the clocks disagree";
    } else {
      o.trusted = true;
      if (point_to_point) o.why = "from send/receive ends (they need not end together: less exact)";
    }
    if (!o.trusted) out.clocks_trusted = false;
  }
  double worst_spread = 0;
  for (const auto& o : out.offsets) worst_spread = std::max(worst_spread, o.spread_ns);
  out.noise_ns = static_cast<TimeNs>(std::max(2000.0, 3 * worst_spread));
  if (!options.estimate_clocks) out.notes.push_back({"clocks_not_estimated", NoteSeverity::kInfo, "clocks taken as they are (no offset applied)"});
}

// What is not trusted, said first; then no verdict is drawn from it.
void say_distrust(const std::vector<std::string>& matching_doubts, RanksAnalysis& out) {
  std::vector<Note> matching;
  for (const auto& doubt : matching_doubts) matching.push_back({"matching_not_trusted", NoteSeverity::kInfo, doubt});
  append_capped(out.distrust, matching, "matching: ");
  std::vector<Note> clocks;
  for (const auto& o : out.offsets) {
    if (!o.trusted) clocks.push_back({"clocks_not_trusted", NoteSeverity::kInfo, "rank " + std::to_string(o.rank) + ": " + o.why});
  }
  append_capped(out.distrust, clocks, "clocks: ");
}

// Each matched collective on aligned clocks: arrivals, spread, wait, transfer, bandwidth, the last
// rank; those some rank lacks go to `incomplete`, with why it lacks them.
void measure_collectives(const RankSet& set, std::size_t ref, const Matched& matched, bool withheld, RanksAnalysis& out) {
  const std::size_t n = set.ranks.size();
  // Per matched collective, on aligned clocks.
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
      if (!same_call({first, dtype_bytes(first->dtype)}, {c, dtype_bytes(c->dtype)})) m.kinds_differ = true;
      m.ranks.push_back(p);
      m.arrival.push_back(aligned(out, p, c->start_ns));
      m.end.push_back(aligned(out, p, c->end_ns));
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
        } else if (aligned(out, p, r.last_ns) < m.first_arrival) {
          m.missing_why.push_back("its trace ends before");
        } else if (aligned(out, p, r.first_ns) > m.last_arrival) {
          m.missing_why.push_back("its trace starts after");
        } else {
          m.missing_why.push_back(withheld ? "missing within its window (untrusted: no verdict)" : "did not arrive");
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
}

// Hang analysis: who did not arrive, where the rank's trace still runs; and the windows: ranks
// whose traces start after, or end before, collectives the others ran (sampled or partial traces).
void judge_missing(const RankSet& set, RanksAnalysis& out) {
  std::map<std::int64_t, std::int64_t> not_arrived, starts_after, ends_before;
  std::int64_t unjudged = 0;
  for (const auto& m : out.incomplete) {
    for (std::size_t i = 0; i < m.missing.size(); ++i) {
      const std::int64_t rank = set.ranks[m.missing[i]].rank;
      const std::string& why = m.missing_why[i];
      if (why == "did not arrive") ++not_arrived[rank];
      if (why.starts_with("missing within")) ++unjudged;
      if (why == "its trace starts after") ++starts_after[rank];
      if (why == "its trace ends before") ++ends_before[rank];
    }
  }
  for (const auto& [rank, count] : not_arrived) {
    out.notes.push_back({"rank_did_not_arrive", NoteSeverity::kInfo,
                         "rank " + std::to_string(rank) + " did not arrive at " + std::to_string(count) +
                             " collective(s) the others ran while its trace was still recording (hang or divergent code path?)",
                         count});
  }
  if (unjudged > 0) {
    out.notes.push_back({"missing_collectives_unjudged", NoteSeverity::kInfo,
                         std::to_string(unjudged) + " time(s) a rank lacks a collective the others ran while its trace recorded: "
                                                    "no hang verdict while the matching or the clocks are not trusted",
                         unjudged});
  }
  {
    std::vector<Note> partial;
    for (const auto& r : set.ranks) {
      const std::int64_t a = starts_after.contains(r.rank) ? starts_after.at(r.rank) : 0;
      const std::int64_t b = ends_before.contains(r.rank) ? ends_before.at(r.rank) : 0;
      if (a == 0 && b == 0) continue;
      std::string line = "rank " + std::to_string(r.rank) + ": its trace";
      if (a > 0) line += " starts after " + std::to_string(a);
      if (a > 0 && b > 0) line += " and";
      if (b > 0) line += " ends before " + std::to_string(b);
      partial.push_back({"window_partial", NoteSeverity::kDataLoss, line + " collective(s) other ranks ran", a + b});
    }
    append_capped(out.windows, partial, "", 16);
  }
}

// Per kind of collective: counts, waits, transfers, medians of spread, size and bandwidth.
void summarize_kinds(RanksAnalysis& out) {
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
}

// Sizes and the link: what bus bandwidth can be read against.
void find_link(const RankSet& set, RanksAnalysis& out) {
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
}

// Per rank (its collectives, waits, comm/compute), and the stragglers: who arrived last by more than
// the noise, how often, and the wait it caused.
void rank_rows_and_stragglers(const RankSet& set, RanksAnalysis& out) {
  const std::size_t n = set.ranks.size();
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
    row.first_ns = aligned(out, p, r.first_ns);
    row.last_ns = aligned(out, p, r.last_ns);
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
}

// Per profiler step: its collectives' waits, spread and top straggler.
void summarize_steps(RanksAnalysis& out) {
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
}

// Skew over time: bins of equal length over the matched collectives' span.
void skew_over_time(const SkewOptions& options, RanksAnalysis& out) {
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
    out.notes.push_back({"no_collectives", NoteSeverity::kInfo, "no rank ran NCCL collectives: nothing to match"});
    return out;
  }
  out.reference_rank = set.ranks[ref].rank;

  std::vector<std::string> matching_doubts;
  const Matched matched = match_collectives(set, ref, options, out, matching_doubts);
  estimate_offsets(set, ref, matched, options, out);
  say_distrust(matching_doubts, out);
  measure_collectives(set, ref, matched, out.verdicts_withheld(), out);
  judge_missing(set, out);
  summarize_kinds(out);
  find_link(set, out);
  rank_rows_and_stragglers(set, out);
  summarize_steps(out);
  skew_over_time(options, out);
  return out;
}

}  // namespace kernscope::ranks
