// The host-side tables of an export: CPU/Python stack samples (COMPOSITE_EVENTS with their frames
// in SAMPLING_CALLCHAINS, as nsys writes them for --sample=cpu and kernscope's Python hook for
// `record --sample cpu`) and KERNSCOPE_HOST_INFO (what the hook said about its sampler).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"
#include "readers/nsys_sqlite/sqlite_db.hpp"

namespace kernscope::nsys {

// The pool's id of a StringIds row (kNoString where the export has no such id): the reader's map,
// filled when it read StringIds.
using StringOf = std::function<StringId(std::int64_t nsys_id)>;

// Fills trace.host from the tables present in `tables`; notes what the recorder could not do.
Result<void> read_host_tables(const Database& db, const std::set<std::string>& tables, const StringOf& string_of, Trace& trace);

}  // namespace kernscope::nsys
