// The fleet digest (ranks/ranks_fleet_digest.hpp) as dicts of column lists, both ways: out of one
// trace's digest for python/kernscope/fleet/digest.py to write as Parquet, and back in from the
// Parquet of many traces for the reduce. The column names and their order live here and in
// digest.py's schemas only.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>

#include "ranks/ranks_fleet_digest.hpp"

namespace kernscope::python {

// A column of `n` values from get(i) as a Python list under `name` (item by item: std::vector<bool>
// has no element to cast from).
template <class T, class Get>
void put(nanobind::dict& d, const char* name, std::size_t n, Get get) {
  nanobind::list values;
  for (std::size_t i = 0; i < n; ++i) values.append(nanobind::cast(static_cast<T>(get(i))));
  d[name] = values;
}

// One trace's digest as the tables ranks, collectives, steps, kernels, busy (each a dict of column
// lists; `part` numbers the trace's ranks, the caller adds `trace`).
nanobind::dict digest_tables(const ranks::FleetDigest& digest);

// The digests of many traces, by trace number, from the tables ranks, collectives, kernels and busy
// (digest.py's schemas, `trace` included; steps are not needed). Malformed tables (a column missing
// or of another type, columns of unequal length, a rank row missing or given twice, rows naming a
// rank the ranks table lacks, an unknown collective kind) throw std::invalid_argument naming it.
std::map<std::int64_t, ranks::FleetDigest> digests_from_tables(const nanobind::dict& ranks, const nanobind::dict& collectives,
                                                              const nanobind::dict& kernels, const nanobind::dict& busy);

}  // namespace kernscope::python
