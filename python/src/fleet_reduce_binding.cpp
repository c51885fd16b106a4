// kernscope._core.reduce_digests(ranks, collectives, kernels, busy): the fleet's digest tables (as
// python/kernscope/fleet/digest.py writes them, read back as dicts of column lists) rebuilt into
// the C++ digests and reduced by ranks/ranks_fleet_reduce.hpp, the engine `kernscope ranks` runs;
// the results come back as dicts of column lists. This file only converts: every rule is the core's.
#include "fleet_reduce_binding.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "ranks/ranks_fleet_reduce.hpp"

namespace nb = nanobind;
using namespace kernscope;
using namespace kernscope::ranks;

namespace {

// Column `name` of `table`, every column of a table as long as its first.
template <class T>
std::vector<T> column(const nb::dict& table, const char* table_name, const char* name, std::size_t& rows) {
  if (!table.contains(name)) throw std::invalid_argument(std::string("reduce_digests: table ") + table_name + " has no column " + name);
  std::vector<T> values;
  if (!nb::try_cast(table[name], values)) {
    throw std::invalid_argument(std::string("reduce_digests: column ") + table_name + "." + name + " has values of the wrong type");
  }
  if (rows == static_cast<std::size_t>(-1)) rows = values.size();
  if (values.size() != rows) throw std::invalid_argument(std::string("reduce_digests: table ") + table_name + "'s columns differ in length");
  return values;
}

constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);

CollectiveKind kind_named(const std::string& name) {
  for (auto k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast,
                 CollectiveKind::kReduce, CollectiveKind::kAllToAll, CollectiveKind::kSendRecv, CollectiveKind::kOther}) {
    if (kind_name(k) == name) return k;
  }
  throw std::invalid_argument("reduce_digests: unknown collective kind '" + name + "'");
}

// The digests by trace number, each rank at its `part`.
std::map<std::int64_t, FleetDigest> rebuild(const nb::dict& ranks, const nb::dict& collectives, const nb::dict& kernels, const nb::dict& busy) {
  std::map<std::int64_t, FleetDigest> traces;
  auto rank_at = [&](std::int64_t trace, std::int64_t part, const char* table) -> RankDigest& {
    auto it = traces.find(trace);
    if (it == traces.end() || part < 0 || static_cast<std::size_t>(part) >= it->second.ranks.size()) {
      throw std::invalid_argument(std::string("reduce_digests: ") + table + " names trace " + std::to_string(trace) + " part " +
                                  std::to_string(part) + ", which the ranks table lacks");
    }
    return it->second.ranks[static_cast<std::size_t>(part)];
  };
  {
    std::size_t n = kUnknown;
    const auto trace = column<std::int64_t>(ranks, "ranks", "trace", n);
    const auto part = column<std::int64_t>(ranks, "ranks", "part", n);
    auto path = column<std::string>(ranks, "ranks", "path", n);
    const auto pid = column<std::int64_t>(ranks, "ranks", "global_pid", n);
    const auto declared = column<std::int64_t>(ranks, "ranks", "declared_rank", n);
    const auto world = column<std::int64_t>(ranks, "ranks", "declared_world_size", n);
    auto backend = column<std::string>(ranks, "ranks", "backend", n);
    const auto device = column<std::int64_t>(ranks, "ranks", "device", n);
    auto device_name = column<std::string>(ranks, "ranks", "device_name", n);
    const auto kernel_count = column<std::int64_t>(ranks, "ranks", "kernels", n);
    const auto first = column<std::int64_t>(ranks, "ranks", "first_ns", n);
    const auto last = column<std::int64_t>(ranks, "ranks", "last_ns", n);
    const auto comm = column<std::int64_t>(ranks, "ranks", "comm_ns", n);
    const auto overlap = column<std::int64_t>(ranks, "ranks", "overlap_ns", n);
    const auto compute = column<std::int64_t>(ranks, "ranks", "compute_ns", n);
    auto identity = column<std::string>(ranks, "ranks", "identity", n);
    auto step_method = column<std::string>(ranks, "ranks", "step_method", n);
    auto step_name = column<std::string>(ranks, "ranks", "step_name", n);
    const auto tpot = column<double>(ranks, "ranks", "tpot_ns", n);
    auto notes = column<std::vector<std::string>>(ranks, "ranks", "notes", n);
    std::map<std::int64_t, std::vector<bool>> seen;  // per trace, which parts have their row
    for (std::size_t i = 0; i < n; ++i) {
      auto& digests = traces[trace[i]].ranks;
      auto& filled = seen[trace[i]];
      if (part[i] < 0) throw std::invalid_argument("reduce_digests: ranks table has a negative part");
      const auto at = static_cast<std::size_t>(part[i]);
      if (at >= digests.size()) {
        digests.resize(at + 1);
        filled.resize(at + 1, false);
      }
      if (filled[at]) throw std::invalid_argument("reduce_digests: ranks table holds trace " + std::to_string(trace[i]) + " part " + std::to_string(part[i]) + " twice");
      filled[at] = true;
      RankDigest& d = digests[at];
      d.path = std::move(path[i]);
      d.global_pid = pid[i];
      d.rank = declared[i];
      d.declared_world_size = world[i];
      d.backend = std::move(backend[i]);
      d.device = device[i];
      d.device_name = std::move(device_name[i]);
      d.kernels = kernel_count[i];
      d.first_ns = first[i];
      d.last_ns = last[i];
      d.collectives.comm_ns = comm[i];
      d.collectives.overlap_ns = overlap[i];
      d.collectives.compute_ns = compute[i];
      d.collectives.identity = std::move(identity[i]);
      d.steps.method = std::move(step_method[i]);
      d.steps.name = std::move(step_name[i]);
      d.steps.tpot_ns = tpot[i];
      d.notes = std::move(notes[i]);
    }
    for (const auto& [t, filled] : seen) {
      if (std::find(filled.begin(), filled.end(), false) != filled.end()) {
        throw std::invalid_argument("reduce_digests: ranks table lacks a part of trace " + std::to_string(t));
      }
    }
  }
  {
    std::size_t n = kUnknown;
    const auto trace = column<std::int64_t>(collectives, "collectives", "trace", n);
    const auto part = column<std::int64_t>(collectives, "collectives", "part", n);
    const auto kind = column<std::string>(collectives, "collectives", "kind", n);
    auto group = column<std::string>(collectives, "collectives", "grp", n);
    const auto seq = column<std::int64_t>(collectives, "collectives", "seq", n);
    const auto index = column<std::int64_t>(collectives, "collectives", "idx", n);
    const auto bytes = column<std::int64_t>(collectives, "collectives", "bytes", n);
    const auto group_size = column<std::int64_t>(collectives, "collectives", "group_size", n);
    auto algorithm = column<std::string>(collectives, "collectives", "algorithm", n);
    auto protocol = column<std::string>(collectives, "collectives", "protocol", n);
    auto dtype = column<std::string>(collectives, "collectives", "dtype", n);
    const auto start = column<std::int64_t>(collectives, "collectives", "start_ns", n);
    const auto end = column<std::int64_t>(collectives, "collectives", "end_ns", n);
    const auto step = column<std::int64_t>(collectives, "collectives", "step", n);
    const auto window = column<std::int64_t>(collectives, "collectives", "win", n);
    const auto layer = column<std::int64_t>(collectives, "collectives", "layer", n);
    for (std::size_t i = 0; i < n; ++i) {
      Collective c;
      c.kind = kind_named(kind[i]);
      c.group = std::move(group[i]);
      c.seq = seq[i];
      c.index = index[i];
      c.bytes = bytes[i];
      c.group_size = group_size[i];
      c.algorithm = std::move(algorithm[i]);
      c.protocol = std::move(protocol[i]);
      c.dtype = std::move(dtype[i]);
      c.start_ns = start[i];
      c.end_ns = end[i];
      c.step = step[i];
      c.window = window[i];
      c.layer = layer[i];
      // Rows keep the digest's order (start order per rank), which order matching relies on.
      rank_at(trace[i], part[i], "collectives").collectives.items.push_back(std::move(c));
    }
  }
  {
    std::size_t n = kUnknown;
    const auto trace = column<std::int64_t>(kernels, "kernels", "trace", n);
    auto name = column<std::string>(kernels, "kernels", "name", n);
    auto op_class = column<std::string>(kernels, "kernels", "op_class", n);
    const auto count = column<std::int64_t>(kernels, "kernels", "count", n);
    const auto total = column<std::int64_t>(kernels, "kernels", "total_ns", n);
    const auto mean = column<double>(kernels, "kernels", "mean_ns", n);
    const auto p50 = column<double>(kernels, "kernels", "p50_ns", n);
    const auto p95 = column<double>(kernels, "kernels", "p95_ns", n);
    const auto p99 = column<double>(kernels, "kernels", "p99_ns", n);
    const auto max = column<std::int64_t>(kernels, "kernels", "max_ns", n);
    for (std::size_t i = 0; i < n; ++i) {
      auto it = traces.find(trace[i]);
      if (it == traces.end()) throw std::invalid_argument("reduce_digests: kernels names trace " + std::to_string(trace[i]) + ", which the ranks table lacks");
      it->second.kernels.push_back({std::move(name[i]), std::move(op_class[i]), count[i], total[i], max[i], mean[i], p50[i], p95[i], p99[i]});
    }
  }
  {
    std::size_t n = kUnknown;
    const auto trace = column<std::int64_t>(busy, "busy", "trace", n);
    const auto part = column<std::int64_t>(busy, "busy", "part", n);
    const auto start = column<std::int64_t>(busy, "busy", "start_ns", n);
    const auto bin = column<std::int64_t>(busy, "busy", "bin_ns", n);
    const auto busy_ns = column<std::int64_t>(busy, "busy", "busy_ns", n);
    for (std::size_t i = 0; i < n; ++i) {
      rank_at(trace[i], part[i], "busy");
      if (bin[i] <= 0) throw std::invalid_argument("reduce_digests: busy.bin_ns must be positive");
      FleetDigest& d = traces[trace[i]];
      d.bin_ns = bin[i];
      d.busy.resize(d.ranks.size());
      d.busy[static_cast<std::size_t>(part[i])].push_back({start[i], busy_ns[i]});
    }
  }
  return traces;
}

// A column of `n` values from get(i), as a Python list (built item by item: std::vector<bool>
// has no element to cast from).
template <class T, class Get>
void put(nb::dict& d, const char* name, std::size_t n, Get get) {
  nb::list values;
  for (std::size_t i = 0; i < n; ++i) values.append(nb::cast(static_cast<T>(get(i))));
  d[name] = values;
}

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
  put<std::vector<std::string>>(d, "notes", n, [&](std::size_t i) { return r[i].notes; });
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
  std::map<std::int64_t, FleetDigest> traces = rebuild(ranks, collectives, kernels, busy);
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
  out["distrust"] = nb::cast(a.distrust);
  out["set_notes"] = nb::cast(f.set.notes);
  out["windows"] = nb::cast(a.windows);
  out["analysis_notes"] = nb::cast(a.notes);
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
