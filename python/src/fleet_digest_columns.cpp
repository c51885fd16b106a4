// The fleet digest as column lists, both ways (fleet_digest_columns.hpp): the one place on the C++
// side that names the columns python/kernscope/fleet/digest.py stores as Parquet.
#include "fleet_digest_columns.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "note_dicts.hpp"

namespace nb = nanobind;
using namespace kernscope;
using namespace kernscope::ranks;

namespace kernscope::python {
namespace {

nb::dict ranks_table(const FleetDigest& f) {
  const auto& r = f.ranks;
  const std::size_t n = r.size();
  nb::dict d;
  put<std::int64_t>(d, "part", n, [&](std::size_t i) { return static_cast<std::int64_t>(i); });
  put<std::string>(d, "path", n, [&](std::size_t i) { return r[i].path; });
  put<std::int64_t>(d, "global_pid", n, [&](std::size_t i) { return r[i].global_pid; });
  put<std::int64_t>(d, "declared_rank", n, [&](std::size_t i) { return r[i].rank; });
  put<std::int64_t>(d, "declared_world_size", n, [&](std::size_t i) { return r[i].declared_world_size; });
  put<std::string>(d, "backend", n, [&](std::size_t i) { return r[i].backend; });
  put<std::int64_t>(d, "device", n, [&](std::size_t i) { return r[i].device; });
  put<std::string>(d, "device_name", n, [&](std::size_t i) { return r[i].device_name; });
  put<std::int64_t>(d, "kernels", n, [&](std::size_t i) { return r[i].kernels; });
  put<std::int64_t>(d, "first_ns", n, [&](std::size_t i) { return r[i].first_ns; });
  put<std::int64_t>(d, "last_ns", n, [&](std::size_t i) { return r[i].last_ns; });
  put<std::int64_t>(d, "comm_ns", n, [&](std::size_t i) { return r[i].collectives.comm_ns; });
  put<std::int64_t>(d, "overlap_ns", n, [&](std::size_t i) { return r[i].collectives.overlap_ns; });
  put<std::int64_t>(d, "compute_ns", n, [&](std::size_t i) { return r[i].collectives.compute_ns; });
  put<std::int64_t>(d, "collectives", n, [&](std::size_t i) { return static_cast<std::int64_t>(r[i].collectives.items.size()); });
  put<std::string>(d, "identity", n, [&](std::size_t i) { return r[i].collectives.identity; });
  put<std::string>(d, "step_method", n, [&](std::size_t i) { return r[i].steps.method; });
  put<std::string>(d, "step_name", n, [&](std::size_t i) { return r[i].steps.name; });
  put<double>(d, "tpot_ns", n, [&](std::size_t i) { return r[i].steps.tpot_ns; });
  put<nb::object>(d, "notes", n, [&](std::size_t i) { return note_dicts(r[i].notes); });
  return d;
}

// Every part's rows of one kind, flattened, each with the part (rank within its trace) it came from.
template <typename Parts, typename RowsOf>
auto rows_with_part(const Parts& parts, RowsOf rows_of) {
  using Row = std::remove_reference_t<decltype(*std::begin(rows_of(parts[0])))>;
  std::vector<std::pair<std::int64_t, const Row*>> rows;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (const auto& row : rows_of(parts[p])) rows.emplace_back(static_cast<std::int64_t>(p), &row);
  }
  return rows;
}

nb::dict collectives_table(const FleetDigest& f) {
  const auto rows = rows_with_part(f.ranks, [](const RankDigest& r) -> const auto& { return r.collectives.items; });
  const std::size_t n = rows.size();
  nb::dict d;
  put<std::int64_t>(d, "part", n, [&](std::size_t i) { return rows[i].first; });
  put<std::string>(d, "kind", n, [&](std::size_t i) { return std::string(kind_name(rows[i].second->kind)); });
  put<std::string>(d, "grp", n, [&](std::size_t i) { return rows[i].second->group; });
  put<std::int64_t>(d, "seq", n, [&](std::size_t i) { return rows[i].second->seq; });
  put<std::int64_t>(d, "idx", n, [&](std::size_t i) { return rows[i].second->index; });
  put<std::int64_t>(d, "bytes", n, [&](std::size_t i) { return rows[i].second->bytes; });
  put<std::int64_t>(d, "group_size", n, [&](std::size_t i) { return rows[i].second->group_size; });
  put<std::string>(d, "algorithm", n, [&](std::size_t i) { return rows[i].second->algorithm; });
  put<std::string>(d, "protocol", n, [&](std::size_t i) { return rows[i].second->protocol; });
  put<std::string>(d, "dtype", n, [&](std::size_t i) { return rows[i].second->dtype; });
  put<std::int64_t>(d, "start_ns", n, [&](std::size_t i) { return rows[i].second->start_ns; });
  put<std::int64_t>(d, "end_ns", n, [&](std::size_t i) { return rows[i].second->end_ns; });
  put<std::int64_t>(d, "step", n, [&](std::size_t i) { return rows[i].second->step; });
  put<std::int64_t>(d, "win", n, [&](std::size_t i) { return rows[i].second->window; });
  put<std::int64_t>(d, "layer", n, [&](std::size_t i) { return rows[i].second->layer; });
  return d;
}

nb::dict steps_table(const FleetDigest& f) {
  const auto rows = rows_with_part(f.ranks, [](const RankDigest& r) -> const auto& { return r.steps.steps; });
  const std::size_t n = rows.size();
  nb::dict d;
  put<std::int64_t>(d, "part", n, [&](std::size_t i) { return rows[i].first; });
  put<std::int64_t>(d, "start_ns", n, [&](std::size_t i) { return rows[i].second->start_ns; });
  put<std::int64_t>(d, "end_ns", n, [&](std::size_t i) { return rows[i].second->end_ns; });
  put<std::int64_t>(d, "gpu_span_ns", n, [&](std::size_t i) { return rows[i].second->gpu_span_ns; });
  return d;
}

nb::dict kernels_table(const FleetDigest& f) {
  const auto& k = f.kernels;
  const std::size_t n = k.size();
  nb::dict d;
  put<std::string>(d, "name", n, [&](std::size_t i) { return k[i].name; });
  put<std::string>(d, "op_class", n, [&](std::size_t i) { return k[i].op_class; });
  put<std::int64_t>(d, "count", n, [&](std::size_t i) { return k[i].count; });
  put<std::int64_t>(d, "total_ns", n, [&](std::size_t i) { return k[i].total_ns; });
  put<double>(d, "mean_ns", n, [&](std::size_t i) { return k[i].mean_ns; });
  put<double>(d, "p50_ns", n, [&](std::size_t i) { return k[i].p50_ns; });
  put<double>(d, "p95_ns", n, [&](std::size_t i) { return k[i].p95_ns; });
  put<double>(d, "p99_ns", n, [&](std::size_t i) { return k[i].p99_ns; });
  put<std::int64_t>(d, "max_ns", n, [&](std::size_t i) { return k[i].max_ns; });
  return d;
}

nb::dict busy_table(const FleetDigest& f) {
  const auto rows = rows_with_part(f.busy, [](const auto& bins) -> const auto& { return bins; });
  const std::size_t n = rows.size();
  nb::dict d;
  put<std::int64_t>(d, "part", n, [&](std::size_t i) { return rows[i].first; });
  put<std::int64_t>(d, "start_ns", n, [&](std::size_t i) { return rows[i].second->start_ns; });
  put<std::int64_t>(d, "bin_ns", n, [&](std::size_t) { return f.bin_ns; });
  put<std::int64_t>(d, "busy_ns", n, [&](std::size_t i) { return rows[i].second->busy_ns; });
  return d;
}

// Column `name` of `table`, every column of a table as long as its first.
template <class T>
std::vector<T> column(const nb::dict& table, const char* table_name, const char* name, std::size_t& rows) {
  if (!table.contains(name)) throw std::invalid_argument(std::string("reduce_digests: table ") + table_name + " has no column " + name);
  std::vector<T> values;
  // Numbers as a NumPy array (the reduce hands Arrow's buffers over, without a Python object per
  // value), else as any sequence.
  bool read = false;
  if constexpr (std::is_arithmetic_v<T>) {
    nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu> array;
    if (nb::try_cast(table[name], array, false)) {
      values.assign(array.data(), array.data() + array.shape(0));
      read = true;
    }
  }
  if (!read && !nb::try_cast(table[name], values)) {
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
}  // namespace

nb::dict digest_tables(const FleetDigest& digest) {
  nb::dict tables;
  tables["ranks"] = ranks_table(digest);
  tables["collectives"] = collectives_table(digest);
  tables["steps"] = steps_table(digest);
  tables["kernels"] = kernels_table(digest);
  tables["busy"] = busy_table(digest);
  return tables;
}

std::map<std::int64_t, FleetDigest> digests_from_tables(const nb::dict& ranks, const nb::dict& collectives, const nb::dict& kernels, const nb::dict& busy) {
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
    const auto notes = column<nb::object>(ranks, "ranks", "notes", n);
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
      d.notes = notes_of_dicts(notes[i], "reduce_digests: ranks.notes");
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

}  // namespace kernscope::python
