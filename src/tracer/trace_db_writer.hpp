// Writes the tracer's rows into an SQLite file with Nsight Systems' export schema (the tables and
// columns of nsys_schema.sql), batch by batch: each batch is one transaction in a write-ahead log,
// so a traced program killed at any point leaves the file and its -wal holding exactly the batches
// committed before; finish() folds the log back into one self-contained file.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernscope/error.hpp"
#include "tracer/self_cost.hpp"
#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

class TraceDbWriter {
 public:
  // Creates `path` (replacing a file there) with the schema; `pid` owns every GPU record.
  static Result<std::unique_ptr<TraceDbWriter>> create(const std::string& path, std::uint32_t pid);
  ~TraceDbWriter();

  // Writes a batch and the strings interned since the last call, in one transaction.
  Result<void> append(const RecordBatch& batch, const StringPool& strings);
  // The tracer's own time per thread and site (KERNSCOPE_TRACER_COST), in one transaction; threads
  // in `program_threads` are marked as the program's. Written before finish().
  Result<void> write_cost(const std::vector<SelfCostRow>& rows, const std::set<std::uint32_t>& program_threads);
  // Closes the file and deletes it with its sidecars (-wal, -shm, -journal): for a process that
  // recorded nothing. The writer takes no more calls.
  Result<void> discard();
  // Metadata rows (KERNSCOPE_TRACER_INFO, whose rows mark the trace finished, and META_DATA_EXPORT),
  // process and thread names (which are interned into `strings`, then written with them); then the
  // log is copied into the file and removed.
  Result<void> finish(const std::vector<std::pair<std::string, std::string>>& info, const std::string& process_name,
                      const std::vector<std::pair<std::uint32_t, std::string>>& thread_names, StringPool& strings);

 private:
  struct Impl;
  explicit TraceDbWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The embedded schema (nsys_schema.sql).
const char* nsys_schema_sql();

}  // namespace kernscope::tracer
