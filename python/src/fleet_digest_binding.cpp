// kernscope._core.fleet_digest(path, bin_ns): one trace reduced by the C++ core to the fleet tier's
// digest tables (ranks/ranks_fleet_digest.hpp), as dicts of column lists that
// python/kernscope/fleet turns into Arrow tables (the reduce of many: fleet_reduce_binding.cpp). Kept apart from the trace binding: it hands out
// owned copies of small results, not views of a loaded trace.
#include "fleet_digest_binding.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>

#include "ranks/ranks_fleet_digest.hpp"

namespace nb = nanobind;
using namespace kernscope;
using namespace kernscope::ranks;

namespace {

// A column of `n` values from get(i), as a Python list.
template <class T, class Get>
void put(nb::dict& d, const char* name, std::size_t n, Get get) {
  std::vector<T> values;
  values.reserve(n);
  for (std::size_t i = 0; i < n; ++i) values.push_back(get(i));
  d[name] = nb::cast(std::move(values));
}

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
  put<std::vector<std::string>>(d, "notes", n, [&](std::size_t i) { return r[i].notes; });
  return d;
}

nb::dict collectives_table(const FleetDigest& f) {
  std::vector<std::pair<std::int64_t, const Collective*>> rows;
  for (std::size_t p = 0; p < f.ranks.size(); ++p) {
    for (const auto& c : f.ranks[p].collectives.items) rows.emplace_back(static_cast<std::int64_t>(p), &c);
  }
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
  std::vector<std::pair<std::int64_t, const RankStep*>> rows;
  for (std::size_t p = 0; p < f.ranks.size(); ++p) {
    for (const auto& s : f.ranks[p].steps.steps) rows.emplace_back(static_cast<std::int64_t>(p), &s);
  }
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
  std::vector<std::pair<std::int64_t, const BusyBin*>> rows;
  for (std::size_t p = 0; p < f.busy.size(); ++p) {
    for (const auto& b : f.busy[p]) rows.emplace_back(static_cast<std::int64_t>(p), &b);
  }
  const std::size_t n = rows.size();
  nb::dict d;
  put<std::int64_t>(d, "part", n, [&](std::size_t i) { return rows[i].first; });
  put<std::int64_t>(d, "start_ns", n, [&](std::size_t i) { return rows[i].second->start_ns; });
  put<std::int64_t>(d, "bin_ns", n, [&](std::size_t) { return f.bin_ns; });
  put<std::int64_t>(d, "busy_ns", n, [&](std::size_t i) { return rows[i].second->busy_ns; });
  return d;
}

}  // namespace

namespace kernscope::python {

void bind_fleet_digest(nb::module_& m, nb::handle error_type) {
  m.def(
      "fleet_digest",
      [error_type](const std::string& path, std::int64_t bin_ns) {
        Result<FleetDigest> digest;
        {
          nb::gil_scoped_release release;  // a pool of threads may reduce several traces at once
          digest = fleet_digest(path, bin_ns);
        }
        if (!digest) {
          PyErr_SetString(error_type.ptr(), digest.error().message.c_str());
          throw nb::python_error();
        }
        nb::dict tables;
        tables["ranks"] = ranks_table(*digest);
        tables["collectives"] = collectives_table(*digest);
        tables["steps"] = steps_table(*digest);
        tables["kernels"] = kernels_table(*digest);
        tables["busy"] = busy_table(*digest);
        return tables;
      },
      nb::arg("path"), nb::arg("bin_ns"),
      "One trace reduced to the fleet tier's tables (ranks, collectives, steps, kernels, busy): dicts of column lists.");
  m.def(
      "expand_trace_arguments",
      [error_type](const std::vector<std::string>& arguments) {
        auto paths = expand_trace_arguments(arguments);
        if (!paths) {
          PyErr_SetString(error_type.ptr(), paths.error().message.c_str());
          throw nb::python_error();
        }
        return *paths;
      },
      nb::arg("arguments"), "DIR, GLOB or FILE arguments as the sorted trace paths `kernscope ranks` reads.");
}

}  // namespace kernscope::python
