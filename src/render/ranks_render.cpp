// Tables, JSON document and text view of the cross-rank analysis.
#include "render/ranks_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "ranks/ranks_steps.hpp"
#include "kernscope/render.hpp"
#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope::ranks {
namespace {

std::int64_t rounded(double v) { return static_cast<std::int64_t>(std::llround(v)); }

std::string readable(double ns) {
  const double a = std::abs(ns);
  if (a < 1e3) return fmt::format("{:.0f} ns", ns);
  if (a < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (a < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

std::string readable_bytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024 * 1024));
  return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
}

std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * part / whole) : "-";
}

std::string rank_list(const RankSet& set, const std::vector<std::size_t>& positions) {
  std::string out;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (i == 12) return out + ", ... (" + std::to_string(positions.size()) + ")";
    if (i) out += ',';  // appended, not "," + string&&: GCC 12's -Wrestrict false positive
    out += std::to_string(set.ranks[positions[i]].rank);
  }
  return out;
}

Cell bandwidth_cell(double bytes_per_s) { return bytes_per_s > 0 ? Cell(bytes_per_s / 1e9) : Cell(); }

// Bus bandwidth as a share of the link's per-direction peak; empty without either.
Cell of_peak(double bus_bandwidth, const RanksAnalysis& a) {
  return bus_bandwidth > 0 && a.link ? Cell(100.0 * bus_bandwidth / a.link->bytes_per_s) : Cell();
}

// Whether a row's straggler or hang verdict can be trusted: "yes", else what is not.
std::string trust_cell(const RanksAnalysis& a) {
  if (!a.verdicts_withheld()) return "yes";
  if (!a.matching_trusted && !a.clocks_trusted) return "no: matching and clocks";
  return !a.matching_trusted ? "no: matching" : "no: clocks";
}

// The "Trusted" column, last, on a table whose rows give straggler or hang verdicts.
void add_trust_column(Table& t, const RanksAnalysis& a) {
  t.columns.push_back({"Trusted"});
  const std::string cell = trust_cell(a);
  for (auto& row : t.rows) row.push_back(cell);
}

}  // namespace

std::vector<Table> ranks_tables(const RankSet& set, const RanksAnalysis& a) {
  std::vector<Table> tables;
  {
    Table t{"ranks", "Ranks", {{"Rank"}, {"Clock Offset", Unit::kDuration}, {"End Difference", Unit::kDuration}, {"Offset Spread", Unit::kDuration}, {"Offset Samples"},
                               {"Clock Trusted"}, {"Clock Note"}, {"Collectives"}, {"Comm Time", Unit::kDuration}, {"Overlapped Comm", Unit::kDuration},
                               {"Overlap (%)"}, {"Wait Time", Unit::kDuration}, {"Times Last"}, {"Rank Evidence"}, {"File"}}, {}};
    for (std::size_t p = 0; p < a.ranks.size(); ++p) {
      const auto& r = a.ranks[p];
      const auto& o = a.offsets[p];
      t.rows.push_back({r.rank, rounded(o.offset_ns), rounded(o.end_difference_ns), rounded(o.spread_ns), o.samples, std::string(o.trusted ? "yes" : "no"), o.why,
                        r.collectives, r.comm_ns, r.overlap_ns,
                        r.comm_ns > 0 ? Cell(100.0 * static_cast<double>(r.overlap_ns) / static_cast<double>(r.comm_ns)) : Cell(),
                        rounded(r.wait_ns), r.times_last, r.evidence, std::filesystem::path(r.path).filename().string()});
    }
    tables.push_back(std::move(t));
  }
  {
    Table t{"collective_kinds", "Wait vs Transfer per Collective Kind",
            {{"Kind"}, {"Count"}, {"Wait (mean per rank)", Unit::kDuration}, {"Transfer", Unit::kDuration}, {"Wait Share (%)"},
             {"Median Spread", Unit::kDuration}, {"Median Transfer", Unit::kDuration}, {"Sized"}, {"Median Bytes"},
             {"Median Alg BW (GB/s)"}, {"Median Bus BW (GB/s)"}, {"Max Bus BW (GB/s)"}, {"Link Peak (GB/s)"},
             {"Median Bus BW of Peak (%)"}, {"Bytes"}}, {}};
    for (const auto& k : a.kinds) {
      const double whole = k.wait_ns + static_cast<double>(k.transfer_ns);
      t.rows.push_back({std::string(kind_name(k.kind)), k.count, rounded(k.wait_ns), k.transfer_ns,
                        whole > 0 ? Cell(100.0 * k.wait_ns / whole) : Cell(), rounded(k.median_spread_ns),
                        rounded(k.median_transfer_ns), k.sized, k.sized > 0 ? Cell(k.median_bytes) : Cell(),
                        bandwidth_cell(k.median_algorithm_bandwidth), bandwidth_cell(k.median_bus_bandwidth),
                        bandwidth_cell(k.max_bus_bandwidth), a.link ? Cell(a.link->bytes_per_s / 1e9) : Cell(),
                        of_peak(k.median_bus_bandwidth, a), k.bytes});
    }
    tables.push_back(std::move(t));
  }
  {
    Table t{"stragglers", "Stragglers",
            {{"Rank"}, {"Times Last"}, {"Collectives"}, {"Share (%)"}, {"Total Lead", Unit::kDuration},
             {"Mean Lead", Unit::kDuration}, {"Wait Caused", Unit::kDuration}}, {}};
    for (const auto& s : a.stragglers) {
      t.rows.push_back({s.rank, s.times_last, s.collectives,
                        s.collectives > 0 ? Cell(100.0 * static_cast<double>(s.times_last) / static_cast<double>(s.collectives)) : Cell(),
                        s.total_lead_ns, s.times_last > 0 ? s.total_lead_ns / s.times_last : 0, s.wait_caused_ns});
    }
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  const TimeNs t0 = a.collectives.empty() ? 0 : a.collectives.front().first_arrival;
  auto collective_columns = [] {
    return std::vector<Column>{{"Group"}, {"Seq"}, {"Index"}, {"Kind"}, {"Algorithm"}, {"Protocol"}, {"Dtype"}, {"Bytes"}, {"Ranks"},
                               {"First Arrival", Unit::kDuration}, {"Spread", Unit::kDuration}, {"Last Rank"},
                               {"Lead", Unit::kDuration}, {"Mean Wait", Unit::kDuration}, {"Transfer", Unit::kDuration},
                               {"Alg BW (GB/s)"}, {"Bus BW (GB/s)"}, {"Bus BW of Peak (%)"}};
  };
  auto collective_row = [&](const MatchedCollective& m) {
    return std::vector<Cell>{m.group, m.seq >= 0 ? Cell(m.seq) : Cell(), m.index, std::string(kind_name(m.kind)), m.algorithm,
                             m.protocol, m.dtype, m.bytes >= 0 ? Cell(m.bytes) : Cell(), static_cast<std::int64_t>(m.ranks.size()),
                             m.first_arrival - t0, m.spread_ns, m.last_rank, m.lead_ns, rounded(m.mean_wait_ns), m.transfer_ns,
                             bandwidth_cell(m.algorithm_bandwidth), bandwidth_cell(m.bus_bandwidth), of_peak(m.bus_bandwidth, a)};
  };
  {
    Table t{"collectives", "Collectives Matched on Every Rank", collective_columns(), {}};
    for (const auto& m : a.collectives) t.rows.push_back(collective_row(m));
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  {
    auto columns = collective_columns();
    columns.push_back({"Missing Ranks"});
    columns.push_back({"Why"});
    Table t{"incomplete", "Collectives Missing on Some Ranks (hang analysis)", columns, {}};
    for (const auto& m : a.incomplete) {
      auto row = collective_row(m);
      row.push_back(rank_list(set, m.missing));
      std::string why;
      for (std::size_t i = 0; i < m.missing.size(); ++i) {
        if (i == 4) {
          why += "; ...";
          break;
        }
        why += (i ? "; " : "") + fmt::format("rank {}: {}", set.ranks[m.missing[i]].rank, m.missing_why[i]);
      }
      row.push_back(why);
      t.rows.push_back(std::move(row));
    }
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  {
    Table t{"skew_over_time", "Skew over Time",
            {{"Bin Start", Unit::kDuration}, {"Bin End", Unit::kDuration}, {"Collectives"}, {"Median Spread", Unit::kDuration},
             {"Max Spread", Unit::kDuration}, {"Top Straggler"}, {"Times Last"}}, {}};
    for (const auto& b : a.bins) {
      t.rows.push_back({b.start_ns, b.end_ns, b.collectives, rounded(b.median_spread_ns), b.max_spread_ns,
                        b.top_straggler >= 0 ? Cell(b.top_straggler) : Cell(), b.top_straggler_times});
    }
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  {
    Table t{"skew_by_step", "Skew per Profiler Step",
            {{"Step"}, {"Collectives"}, {"Wait (mean per rank)", Unit::kDuration}, {"Transfer", Unit::kDuration},
             {"Median Spread", Unit::kDuration}, {"Max Spread", Unit::kDuration}, {"Top Straggler"}, {"Times Last"}}, {}};
    for (const auto& st : a.steps) {
      t.rows.push_back({st.step, st.collectives, rounded(st.wait_ns), st.transfer_ns, rounded(st.median_spread_ns), st.max_spread_ns,
                        st.top_straggler >= 0 ? Cell(st.top_straggler) : Cell(), st.top_straggler_times});
    }
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  const StepsView steps = analyze_rank_steps(set, a);
  {
    Table t{"rank_steps", "Steps per Rank (each rank's own step windows)",
            {{"Rank"}, {"Step Name"}, {"Phase"}, {"Steps"}, {"Wall p50", Unit::kDuration}, {"Wall p95", Unit::kDuration},
             {"Wall Max", Unit::kDuration}, {"Wall Mean", Unit::kDuration}, {"GPU Span p50", Unit::kDuration},
             {"TPOT p50", Unit::kDuration}, {"TPOT From"}, {"Slowest"}, {"Steps From"}}, {}};
    for (const auto& r : steps.ranks) {
      const bool any = r.wall.count > 0;
      t.rows.push_back({r.rank, r.name, any ? Cell(std::string(phase_name(r.phase))) : Cell(), r.wall.count,
                        any ? Cell(rounded(r.wall.p50)) : Cell(), any ? Cell(rounded(r.wall.p95)) : Cell(),
                        any ? Cell(r.wall.max) : Cell(), any ? Cell(rounded(r.wall.mean)) : Cell(),
                        r.gpu_span.count ? Cell(rounded(r.gpu_span.p50)) : Cell(), r.tpot_ns >= 0 ? Cell(rounded(r.tpot_ns)) : Cell(),
                        r.tpot_from, std::string(r.rank == steps.slowest_rank ? "yes" : ""), r.method});
    }
    tables.push_back(std::move(t));
  }
  {
    Table t{"slowest_rank_steps", "The Slowest Rank's Steps beside the Other Ranks' Same Steps",
            {{"Step"}, {"Wall", Unit::kDuration}, {"Min Wall (all ranks)", Unit::kDuration}, {"Median Wall (all ranks)", Unit::kDuration},
             {"Max Wall (all ranks)", Unit::kDuration}, {"Longest On"}, {"Collectives"}, {"Max Spread", Unit::kDuration},
             {"Most Last"}, {"Times Last"}}, {}};
    for (const auto& r : steps.slowest_steps) {
      t.rows.push_back({r.step, r.wall_ns, r.min_wall_ns, r.median_wall_ns, r.max_wall_ns, r.longest_rank, r.collectives,
                        r.collectives ? Cell(r.max_spread_ns) : Cell(), r.most_last_rank >= 0 ? Cell(r.most_last_rank) : Cell(),
                        r.most_last_times});
    }
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  {
    Table t{"skew_by_layer", "Skew per Position within the Step (layer index = order within the step)",
            {{"Layer"}, {"Collectives"}, {"Wait (mean per rank)", Unit::kDuration}, {"Transfer", Unit::kDuration},
             {"Median Spread", Unit::kDuration}, {"Max Spread", Unit::kDuration}, {"Top Straggler"}, {"Times Last"},
             {"Mean Lead", Unit::kDuration}}, {}};
    for (const auto& l : steps.layers) {
      t.rows.push_back({l.layer, l.collectives, rounded(l.wait_ns), l.transfer_ns, rounded(l.median_spread_ns), l.max_spread_ns,
                        l.top_straggler >= 0 ? Cell(l.top_straggler) : Cell(), l.top_straggler_times, rounded(l.mean_lead_ns)});
    }
    add_trust_column(t, a);
    tables.push_back(std::move(t));
  }
  return tables;
}

std::string ranks_json(const RankSet& set, const RanksAnalysis& a, TimeUnit unit) {
  JsonWriter w;
  w.begin_object();
  // What is not trusted comes first: no straggler or hang verdict is drawn from it.
  w.member("verdicts_withheld", a.verdicts_withheld());
  w.key("distrust").begin_array();
  for (const auto& d : a.distrust) w.value(d.text);
  w.end_array();
  w.key("windows").begin_array();
  for (const auto& d : a.windows) w.value(d.text);
  w.end_array();
  w.member("ranks", static_cast<std::int64_t>(set.ranks.size()));
  w.member("world_size", set.world_size);
  w.member("world_size_evidence", set.world_evidence);
  w.member("reference_rank", a.reference_rank);
  w.member("clocks_trusted", a.clocks_trusted);
  w.member("matching_trusted", a.matching_trusted);
  w.member("matching", a.matching);
  w.member("straggler_noise_ns", a.noise_ns);
  w.member("sizes", a.sizes_note);
  w.key("link").begin_object();
  w.member("note", a.link_note);
  if (a.link) {
    w.member("name", a.link->name);
    w.member("link", a.link->link);
    w.member("per_direction_gbs", a.link->bytes_per_s / 1e9);
    w.member("source", a.link->source);
  }
  w.end_object();
  w.member("time_unit", std::string(time_unit_suffix(unit)));
  // Every note with its kind, the distrust and the windows among them (their own keys above give their texts).
  std::vector<Note> notes = set.notes;
  for (const auto* more : {&a.distrust, &a.windows, &a.notes}) notes.insert(notes.end(), more->begin(), more->end());
  write_notes_json(w.key("notes"), notes);
  w.key("tables").begin_object();
  for (const auto& table : ranks_tables(set, a)) {
    std::ostringstream rendered;
    RenderOptions options;
    options.format = Format::kJson;
    options.time_unit = unit;
    options.nsys_empty_report = true;
    render(rendered, table, options);
    w.key(table.report).raw(rendered.str());
  }
  w.end_object();
  w.end_object();
  return w.finish();
}

std::string ranks_text(const RankSet& set, const RanksAnalysis& a) {
  std::string s;
  // A group's straggler as said in the text: withheld while the matching or the clocks are untrusted.
  auto most_last = [&](std::int64_t rank, std::int64_t times, const std::string& more = "") {
    if (a.verdicts_withheld()) return std::string("withheld");
    return rank >= 0 ? fmt::format("rank {} ({}x{})", rank, times, more) : std::string("-");
  };
  auto line = [&](const std::string& text) { s += text + "\n"; };
  std::set<std::string> files;
  for (const auto& r : set.ranks) files.insert(r.path);
  line(fmt::format("Ranks: {} trace(s) read as {} rank(s); world size {} ({})", files.size(), set.ranks.size(), set.world_size,
                   set.world_evidence));
  // What is not trusted first: no verdict below is drawn from it.
  const bool withheld = a.verdicts_withheld();
  if (!a.distrust.empty()) {
    line("NOT TRUSTED: no straggler or hang verdict is given; the figures below are as matched, untrusted:");
    for (const auto& d : a.distrust) line("  ! " + d.text);
  }
  for (const auto& n : set.notes) line("  ! " + n.text);
  if (!a.windows.empty()) {
    line(std::string("Sampled or partial traces: the ranks' windows start or end at different collectives (those outside a rank's window are "
                     "left out of the skew figures and are not hangs)") + (withheld ? ", as matched, untrusted:" : ":"));
    for (const auto& w : a.windows) line("  ! " + w.text);
  }
  if (!a.matching.empty()) line("Collectives matched " + a.matching + ".");
  if (a.reference_rank < 0) {
    for (const auto& n : a.notes) line("  ! " + n.text);
    return s;
  }
  line("");
  line(fmt::format("Clocks (reference rank {}; end diff = median of collective end differences, applied as the offset unless the"
                   " rank shares the reference's file; spread = their median absolute deviation){}",
                   a.reference_rank, a.clocks_trusted ? "" : ": NOT all trusted"));
  line(fmt::format("  {:>5}  {:>12}  {:>12}  {:>10}  {:>6}  {:>11}  {:>10}  {:>8}  {:>10}  {:>5}  {}", "rank", "offset", "end diff",
                   "spread", "coll.", "comm", "overlap", "wait", "last", "", "rank from"));
  const std::size_t shown = std::min<std::size_t>(a.ranks.size(), 16);
  for (std::size_t p = 0; p < shown; ++p) {
    const auto& r = a.ranks[p];
    const auto& o = a.offsets[p];
    line(fmt::format("  {:>5}  {:>12}  {:>12}  {:>10}  {:>6}  {:>11}  {:>10}  {:>8}  {:>10}  {:>5}  {}", r.rank, readable(o.offset_ns),
                     readable(o.end_difference_ns), readable(o.spread_ns), r.collectives, readable(static_cast<double>(r.comm_ns)),
                     percent(static_cast<double>(r.overlap_ns), static_cast<double>(r.comm_ns)), readable(r.wait_ns),
                     withheld ? std::string("-") : fmt::format("{}x", r.times_last), o.trusted ? "" : "(!)", r.evidence));
  }
  if (a.ranks.size() > shown) line(fmt::format("  ... {} more ranks (CSV/JSON: the ranks table)", a.ranks.size() - shown));
  for (std::size_t p = 0; p < a.offsets.size(); ++p) {
    if (!a.offsets[p].trusted) line(fmt::format("  (!) rank {}: {}", a.offsets[p].rank, a.offsets[p].why));
  }
  line("");
  line(fmt::format("Collectives: {} on every rank, {} missing on some rank", a.collectives.size(), a.incomplete.size()));
  if (!a.kinds.empty()) {
    line(fmt::format("  {:<15} {:>6}  {:>12}  {:>12}  {:>6}  {:>12}  {:>12}  {:>10}  {:>9}  {:>9}  {:>7}", "kind", "count", "wait/rank",
                     "transfer", "wait%", "med. spread", "med. transf.", "med. size", "algBw", "busBw", "of peak"));
    for (const auto& k : a.kinds) {
      const double whole = k.wait_ns + static_cast<double>(k.transfer_ns);
      const bool bw = k.median_bus_bandwidth > 0;
      line(fmt::format("  {:<15} {:>6}  {:>12}  {:>12}  {:>6}  {:>12}  {:>12}  {:>10}  {:>9}  {:>9}  {:>7}", kind_name(k.kind), k.count,
                       readable(k.wait_ns), readable(static_cast<double>(k.transfer_ns)),
                       whole > 0 ? fmt::format("{:.0f}", 100 * k.wait_ns / whole) : "-", readable(k.median_spread_ns),
                       readable(k.median_transfer_ns), k.sized > 0 ? readable_bytes(static_cast<double>(k.median_bytes)) : "no sizes",
                       bw ? fmt::format("{:.2f}", k.median_algorithm_bandwidth / 1e9) : "-",
                       bw ? fmt::format("{:.2f}", k.median_bus_bandwidth / 1e9) : "-",
                       bw && a.link ? fmt::format("{:.1f}%", 100 * k.median_bus_bandwidth / a.link->bytes_per_s) : "-"));
    }
    line("  wait = last arrival - a rank's arrival (mean over ranks); transfer = last arrival -> end; algBw = size / transfer,");
    line("  busBw = algBw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter, all-to-all), 1 (others), GB/s (nccl-tests)");
    line("  Sizes: " + a.sizes_note);
    line("  Link: " + a.link_note);
    if (a.link) line("  (the device name gives the part, not the wiring: PCIe-only peers, bridges or peers on other hosts are not visible)");
  }
  line("");
  if (withheld) {
    line("Stragglers: withheld (not trusted: see the top; the stragglers table holds the figures as matched)");
  } else if (a.stragglers.empty()) {
    line(fmt::format("Stragglers: none (no rank arrived last by more than {})", readable(static_cast<double>(a.noise_ns))));
  } else {
    line(fmt::format("Stragglers (last to arrive by more than {}):", readable(static_cast<double>(a.noise_ns))));
    for (std::size_t i = 0; i < a.stragglers.size() && i < 8; ++i) {
      const auto& st = a.stragglers[i];
      line(fmt::format("  rank {:>4}: last in {} of {} collectives, by {} on average; the others waited {} in all", st.rank,
                       st.times_last, st.collectives, readable(static_cast<double>(st.total_lead_ns) / static_cast<double>(st.times_last)),
                       readable(static_cast<double>(st.wait_caused_ns))));
    }
  }
  if (!a.bins.empty()) {
    std::string spreads, tops;
    for (const auto& b : a.bins) {
      spreads += fmt::format(" {:>9}", b.collectives ? readable(b.median_spread_ns) : "-");
      tops += fmt::format(" {:>9}", b.top_straggler >= 0 ? fmt::format("r{}", b.top_straggler) : "-");
    }
    line("");
    line(fmt::format("Skew over time ({} bins of {}){}:", a.bins.size(), readable(static_cast<double>(a.bins.front().end_ns)),
                     withheld ? ", untrusted" : ""));
    line("  median spread" + spreads);
    if (!withheld) line("  most last    " + tops);
  }
  if (!a.steps.empty()) {
    line("");
    line("Per profiler step (ProfilerStep#N on the reference rank):");
    for (std::size_t i = 0; i < a.steps.size() && i < 12; ++i) {
      const auto& st = a.steps[i];
      line(fmt::format("  step {:>6}: {:>4} collectives, wait/rank {:>10}, transfer {:>10}, median spread {:>10}, most last {}", st.step,
                       st.collectives, readable(st.wait_ns), readable(static_cast<double>(st.transfer_ns)),
                       readable(st.median_spread_ns), most_last(st.top_straggler, st.top_straggler_times)));
    }
    if (a.steps.size() > 12) line(fmt::format("  ... {} more steps (the skew_by_step table)", a.steps.size() - 12));
  }
  const StepsView sv = analyze_rank_steps(set, a);
  if (sv.slowest_rank >= 0) {
    line("");
    line("Steps per rank (each rank's own step windows):");
    for (std::size_t i = 0; i < sv.ranks.size() && i < 16; ++i) {
      const auto& r = sv.ranks[i];
      if (r.wall.count == 0) {
        line(fmt::format("  rank {:>4}: {}", r.rank, r.method));
        continue;
      }
      line(fmt::format("  rank {:>4}: {:>4} x {}, wall p50 {:>10}, p95 {:>10}, max {:>10}{}{}", r.rank, r.wall.count, r.name,
                       readable(r.wall.p50), readable(r.wall.p95), readable(static_cast<double>(r.wall.max)),
                       r.tpot_ns >= 0 ? fmt::format(", TPOT {} ({})", readable(r.tpot_ns), r.tpot_from) : "",
                       r.rank == sv.slowest_rank ? "  <- slowest" : ""));
    }
    if (sv.ranks.size() > 16) line(fmt::format("  ... {} more ranks (the rank_steps table)", sv.ranks.size() - 16));
    for (const auto& r : sv.ranks) {
      if (r.wall.count == 0) continue;
      line(fmt::format("  steps from (rank {}; the rank_steps table has each rank's): {}", r.rank, r.method));
      break;
    }
    line("  slowest rank " + std::to_string(sv.slowest_rank) + ": " + sv.slowest_why);
    std::vector<const SlowStepRow*> longest;
    for (const auto& r : sv.slowest_steps) longest.push_back(&r);
    std::stable_sort(longest.begin(), longest.end(), [](auto* x, auto* y) { return x->wall_ns > y->wall_ns; });
    line(fmt::format("  its {} longest steps (the slowest_rank_steps table has all {}):", std::min<std::size_t>(5, longest.size()), longest.size()));
    for (std::size_t i = 0; i < longest.size() && i < 5; ++i) {
      const auto& r = *longest[i];
      line(fmt::format("    step {:>5}: {:>10} (all ranks {} .. {}), {} collectives, max spread {}, most last {}", r.step,
                       readable(static_cast<double>(r.wall_ns)), readable(static_cast<double>(r.min_wall_ns)),
                       readable(static_cast<double>(r.max_wall_ns)), r.collectives, readable(static_cast<double>(r.max_spread_ns)),
                       most_last(r.most_last_rank, r.most_last_times)));
    }
  }
  for (const auto& n : sv.notes) line("  ! " + n.text);
  if (!sv.layers.empty()) {
    line("");
    line("Per layer (position of a collective within its step on the reference rank):");
    for (std::size_t i = 0; i < sv.layers.size() && i < 16; ++i) {
      const auto& l = sv.layers[i];
      line(fmt::format("  layer {:>4}: {:>5} collectives, wait/rank {:>10}, median spread {:>10}, max spread {:>10}, most last {}", l.layer,
                       l.collectives, readable(l.wait_ns), readable(l.median_spread_ns), readable(static_cast<double>(l.max_spread_ns)),
                       most_last(l.top_straggler, l.top_straggler_times, ", lead " + readable(l.mean_lead_ns))));
    }
    if (sv.layers.size() > 16) line(fmt::format("  ... {} more (the skew_by_layer table)", sv.layers.size() - 16));
  }
  if (!a.incomplete.empty()) {
    line("");
    line(withheld ? "Collectives missing on some ranks (no hang verdict: not trusted, see the top)" : "Hang analysis: collectives missing on some ranks");
    for (std::size_t i = 0; i < a.incomplete.size() && i < 6; ++i) {
      const auto& m = a.incomplete[i];
      std::string why;
      for (std::size_t j = 0; j < m.missing.size() && j < 4; ++j) {
        why += (j ? "; " : "") + fmt::format("rank {} {}", set.ranks[m.missing[j]].rank, m.missing_why[j]);
      }
      line(fmt::format("  {} #{} ({}) ran on ranks {}; {}", m.group, m.seq >= 0 ? m.seq : m.index, kind_name(m.kind),
                       rank_list(set, m.ranks), why));
    }
    if (a.incomplete.size() > 6) line(fmt::format("  ... {} more (the incomplete table)", a.incomplete.size() - 6));
  }
  if (!a.notes.empty()) {
    line("");
    for (const auto& n : a.notes) line("  ! " + n.text);
  }
  return s;
}

}  // namespace kernscope::ranks
