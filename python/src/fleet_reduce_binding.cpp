// kernscope._core.reduce_digests(ranks, collectives, kernels, busy): the fleet's digest tables (as
// python/kernscope/fleet/digest.py writes them, read back as dicts of column lists) rebuilt into
// the C++ digests (fleet_digest_columns.hpp) and reduced by ranks/ranks_fleet_reduce.hpp, the
// engine `kernscope ranks` runs; the results come back as dicts of column lists. This file only
// converts: every rule is the core's.
#include "fleet_reduce_binding.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <utility>

#include "fleet_digest_columns.hpp"
#include "note_dicts.hpp"
#include "ranks/ranks_fleet_reduce.hpp"

namespace nb = nanobind;
using namespace kernscope;
using namespace kernscope::ranks;
using kernscope::python::note_dicts;
using kernscope::python::put;

namespace {

std::int64_t rounded(double v) { return static_cast<std::int64_t>(std::llround(v)); }

nb::dict units_table(const FleetReduction& f) {
  const auto& r = f.set.ranks;
  nb::dict d;
  put<std::int64_t>(d, "trace", r.size(), [&](std::size_t i) { return f.origin[i].first; });
  put<std::int64_t>(d, "part", r.size(), [&](std::size_t i) { return static_cast<std::int64_t>(f.origin[i].second); });
  put<std::int64_t>(d, "rank", r.size(), [&](std::size_t i) { return r[i].rank; });
  put<std::string>(d, "evidence", r.size(), [&](std::size_t i) { return r[i].evidence; });
  put<std::string>(d, "path", r.size(), [&](std::size_t i) { return r[i].path; });
  return d;
}

nb::dict ranks_table(const FleetReduction& f) {
  const auto& r = f.set.ranks;
  const auto& a = f.analysis;
  const std::size_t n = r.size();
  // analyze_ranks leaves its per-rank rows empty when no rank ran collectives.
  auto row = [&](std::size_t i) { return i < a.ranks.size() ? a.ranks[i] : RankRow{}; };
  nb::dict d;
  put<std::int64_t>(d, "rank", n, [&](std::size_t i) { return r[i].rank; });
  put<std::string>(d, "evidence", n, [&](std::size_t i) { return r[i].evidence; });
  put<std::string>(d, "path", n, [&](std::size_t i) { return r[i].path; });
  put<std::int64_t>(d, "kernels", n, [&](std::size_t i) { return r[i].kernels; });
  put<std::int64_t>(d, "collectives", n, [&](std::size_t i) { return static_cast<std::int64_t>(r[i].collectives.items.size()); });
  put<std::int64_t>(d, "comm_ns", n, [&](std::size_t i) { return r[i].collectives.comm_ns; });
  put<std::int64_t>(d, "overlap_ns", n, [&](std::size_t i) { return r[i].collectives.overlap_ns; });
  put<std::int64_t>(d, "compute_ns", n, [&](std::size_t i) { return r[i].collectives.compute_ns; });
  put<std::int64_t>(d, "wait_ns", n, [&](std::size_t i) { return rounded(row(i).wait_ns); });  // sums of whole ns
  put<std::int64_t>(d, "times_last", n, [&](std::size_t i) { return row(i).times_last; });
  put<std::int64_t>(d, "clock_offset_ns", n, [&](std::size_t i) { return rounded(a.offsets[i].offset_ns); });
  put<double>(d, "end_difference_ns", n, [&](std::size_t i) { return a.offsets[i].end_difference_ns; });
  put<double>(d, "offset_spread_ns", n, [&](std::size_t i) { return a.offsets[i].spread_ns; });
  put<std::int64_t>(d, "offset_samples", n, [&](std::size_t i) { return a.offsets[i].samples; });
  put<bool>(d, "clock_trusted", n, [&](std::size_t i) { return a.offsets[i].trusted; });
  put<std::string>(d, "clock_note", n, [&](std::size_t i) { return a.offsets[i].why; });
  put<std::string>(d, "step_name", n, [&](std::size_t i) { return r[i].steps.name; });
  put<double>(d, "tpot_ns", n, [&](std::size_t i) { return r[i].steps.tpot_ns; });
  put<nb::object>(d, "notes", n, [&](std::size_t i) { return note_dicts(r[i].notes); });
  return d;
}

nb::dict stragglers_table(const RanksAnalysis& a) {
  const auto& s = a.stragglers;
  nb::dict d;
  put<std::int64_t>(d, "rank", s.size(), [&](std::size_t i) { return s[i].rank; });
  put<std::int64_t>(d, "times_last", s.size(), [&](std::size_t i) { return s[i].times_last; });
  put<std::int64_t>(d, "total_lead_ns", s.size(), [&](std::size_t i) { return s[i].total_lead_ns; });
  put<std::int64_t>(d, "wait_caused_ns", s.size(), [&](std::size_t i) { return s[i].wait_caused_ns; });
  put<std::int64_t>(d, "collectives", s.size(), [&](std::size_t i) { return s[i].collectives; });
  return d;
}

nb::dict kinds_table(const RanksAnalysis& a) {
  const auto& k = a.kinds;
  nb::dict d;
  put<std::string>(d, "kind", k.size(), [&](std::size_t i) { return std::string(kind_name(k[i].kind)); });
  put<std::int64_t>(d, "count", k.size(), [&](std::size_t i) { return k[i].count; });
  put<double>(d, "wait_ns", k.size(), [&](std::size_t i) { return k[i].wait_ns; });
  put<std::int64_t>(d, "transfer_ns", k.size(), [&](std::size_t i) { return k[i].transfer_ns; });
  put<double>(d, "median_spread_ns", k.size(), [&](std::size_t i) { return k[i].median_spread_ns; });
  put<double>(d, "median_transfer_ns", k.size(), [&](std::size_t i) { return k[i].median_transfer_ns; });
  put<std::int64_t>(d, "sized", k.size(), [&](std::size_t i) { return k[i].sized; });
  nb::list bytes;  // None where no collective of the kind carries its size (not 0 bytes)
  for (const auto& row : k) bytes.append(row.sized > 0 ? nb::cast(row.bytes) : nb::none());
  d["bytes"] = bytes;
  put<double>(d, "median_bus_bandwidth", k.size(), [&](std::size_t i) { return k[i].median_bus_bandwidth; });
  put<double>(d, "max_bus_bandwidth", k.size(), [&](std::size_t i) { return k[i].max_bus_bandwidth; });
  return d;
}

nb::dict collectives_table(const RanksAnalysis& a) {
  const auto& m = a.collectives;
  nb::dict d;
  put<std::string>(d, "grp", m.size(), [&](std::size_t i) { return m[i].group; });
  put<std::int64_t>(d, "seq", m.size(), [&](std::size_t i) { return m[i].seq; });
  put<std::int64_t>(d, "num", m.size(), [&](std::size_t i) { return m[i].index; });
  put<std::string>(d, "kind", m.size(), [&](std::size_t i) { return std::string(kind_name(m[i].kind)); });
  put<std::int64_t>(d, "bytes", m.size(), [&](std::size_t i) { return m[i].bytes; });
  put<std::int64_t>(d, "step", m.size(), [&](std::size_t i) { return m[i].step; });
  put<std::int64_t>(d, "first_arrival", m.size(), [&](std::size_t i) { return m[i].first_arrival; });
  put<std::int64_t>(d, "last_arrival", m.size(), [&](std::size_t i) { return m[i].last_arrival; });
  put<std::int64_t>(d, "end_ns", m.size(), [&](std::size_t i) { return m[i].end_ns; });
  put<std::int64_t>(d, "spread_ns", m.size(), [&](std::size_t i) { return m[i].spread_ns; });
  put<std::int64_t>(d, "transfer_ns", m.size(), [&](std::size_t i) { return m[i].transfer_ns; });
  put<double>(d, "mean_wait_ns", m.size(), [&](std::size_t i) { return m[i].mean_wait_ns; });
  put<std::int64_t>(d, "last_rank", m.size(), [&](std::size_t i) { return m[i].last_rank; });
  put<std::int64_t>(d, "lead_ns", m.size(), [&](std::size_t i) { return m[i].lead_ns; });
  put<double>(d, "bus_bandwidth", m.size(), [&](std::size_t i) { return m[i].bus_bandwidth; });
  return d;
}

nb::dict classes_table(const FleetReduction& f) {
  const auto& c = f.classes;
  nb::dict d;
  put<std::string>(d, "op_class", c.size(), [&](std::size_t i) { return c[i].op_class; });
  put<std::int64_t>(d, "kernels", c.size(), [&](std::size_t i) { return c[i].kernels; });
  put<std::int64_t>(d, "total_ns", c.size(), [&](std::size_t i) { return c[i].total_ns; });
  put<std::int64_t>(d, "traces", c.size(), [&](std::size_t i) { return c[i].traces; });
  put<double>(d, "mean_per_trace_ns", c.size(), [&](std::size_t i) { return c[i].mean_per_trace_ns; });
  return d;
}

nb::dict kernels_table(const FleetReduction& f) {
  const auto& k = f.kernels;
  nb::dict d;
  put<std::string>(d, "name", k.size(), [&](std::size_t i) { return k[i].name; });
  put<std::string>(d, "op_class", k.size(), [&](std::size_t i) { return k[i].op_class; });
  put<std::int64_t>(d, "traces", k.size(), [&](std::size_t i) { return k[i].traces; });
  put<std::int64_t>(d, "count", k.size(), [&](std::size_t i) { return k[i].count; });
  put<std::int64_t>(d, "total_ns", k.size(), [&](std::size_t i) { return k[i].total_ns; });
  put<std::int64_t>(d, "min_trace_total_ns", k.size(), [&](std::size_t i) { return k[i].min_trace_total_ns; });
  put<std::int64_t>(d, "max_trace_total_ns", k.size(), [&](std::size_t i) { return k[i].max_trace_total_ns; });
  put<std::int64_t>(d, "slowest_trace", k.size(), [&](std::size_t i) { return k[i].slowest_trace; });
  put<double>(d, "median_p50_ns", k.size(), [&](std::size_t i) { return k[i].median_p50_ns; });
  put<double>(d, "max_p99_ns", k.size(), [&](std::size_t i) { return k[i].max_p99_ns; });
  put<std::int64_t>(d, "max_ns", k.size(), [&](std::size_t i) { return k[i].max_ns; });
  return d;
}

nb::dict utilization_table(const FleetReduction& f) {
  const auto& u = f.utilization;
  nb::dict d;
  put<std::int64_t>(d, "bin", u.size(), [&](std::size_t i) { return u[i].bin; });
  put<std::int64_t>(d, "bin_ns", u.size(), [&](std::size_t i) { return u[i].bin_ns; });
  put<std::int64_t>(d, "ranks", u.size(), [&](std::size_t i) { return u[i].ranks; });
  put<double>(d, "mean_busy", u.size(), [&](std::size_t i) { return u[i].mean_busy; });
  put<double>(d, "min_busy", u.size(), [&](std::size_t i) { return u[i].min_busy; });
  put<std::int64_t>(d, "least_busy_rank", u.size(), [&](std::size_t i) { return u[i].least_busy_rank; });
  return d;
}

nb::dict rank_utilization_table(const FleetReduction& f) {
  const auto& u = f.rank_utilization;
  nb::dict d;
  put<std::int64_t>(d, "rank", u.size(), [&](std::size_t i) { return u[i].rank; });
  put<double>(d, "busy_share", u.size(), [&](std::size_t i) { return u[i].busy_share; });
  put<double>(d, "median_bin_busy", u.size(), [&](std::size_t i) { return u[i].median_bin_busy; });
  put<double>(d, "min_bin_busy", u.size(), [&](std::size_t i) { return u[i].min_bin_busy; });
  put<std::int64_t>(d, "bins", u.size(), [&](std::size_t i) { return u[i].bins; });
  return d;
}

nb::dict reduce_digests(const nb::dict& ranks, const nb::dict& collectives, const nb::dict& kernels, const nb::dict& busy) {
  std::map<std::int64_t, FleetDigest> traces = kernscope::python::digests_from_tables(ranks, collectives, kernels, busy);
  FleetReduction f;
  {
    std::vector<NumberedDigest> input;
    for (auto& [trace, digest] : traces) input.push_back({trace, std::move(digest)});
    nb::gil_scoped_release release;
    f = reduce_fleet(std::move(input));
  }
  const RanksAnalysis& a = f.analysis;
  nb::dict out;
  out["ranks_read"] = f.set.ranks.size();
  out["world_size"] = f.set.world_size;
  out["world_evidence"] = f.set.world_evidence;
  out["matching"] = a.matching;  // empty: no rank ran collectives
  out["reference_rank"] = a.reference_rank;
  out["noise_ns"] = a.noise_ns;
  out["clocks_trusted"] = a.clocks_trusted;
  out["matching_trusted"] = a.matching_trusted;
  out["verdicts_withheld"] = a.verdicts_withheld();
  out["distrust"] = nb::cast(note_texts(a.distrust));
  out["windows"] = nb::cast(note_texts(a.windows));
  // Every note in the order `kernscope ranks` says them: what is not trusted first.
  std::vector<Note> notes = a.distrust;
  for (const auto* more : {&std::as_const(f.set.notes), &a.windows, &a.notes}) notes.insert(notes.end(), more->begin(), more->end());
  out["notes"] = note_dicts(notes);
  out["link_note"] = a.link_note;
  out["sizes_note"] = a.sizes_note;
  out["units"] = units_table(f);
  nb::dict tables;
  tables["ranks"] = ranks_table(f);
  tables["stragglers"] = stragglers_table(a);
  tables["kinds"] = kinds_table(a);
  tables["collectives"] = collectives_table(a);
  tables["classes"] = classes_table(f);
  tables["kernels"] = kernels_table(f);
  tables["utilization"] = utilization_table(f);
  tables["rank_utilization"] = rank_utilization_table(f);
  out["tables"] = tables;
  return out;
}

}  // namespace

namespace kernscope::python {

void bind_fleet_reduce(nb::module_& m) {
  m.def("reduce_digests", &reduce_digests, nb::arg("ranks"), nb::arg("collectives"), nb::arg("kernels"), nb::arg("busy"),
        "The fleet's digest tables (dicts of column lists, digest.py's schemas with `trace`) reduced by the C++ ranks engine: "
        "scalars, notes, `units` (trace, part -> rank) and `tables` (dicts of column lists).");
}

}  // namespace kernscope::python
