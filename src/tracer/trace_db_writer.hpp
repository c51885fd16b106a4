// Writes the tracer's rows into an SQLite file with Nsight Systems' export schema (the tables and
// columns of nsys_schema.sql), batch by batch: each batch is one transaction in a write-ahead log,
// so a traced program killed at any point leaves the file and its -wal holding exactly the batches
// committed before; finish() folds the log back into one self-contained file.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernscope/error.hpp"
#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

class TraceDbWriter {
 public:
  // Creates `path` (replacing a file there) with the schema; `pid` owns every GPU record.
  static Result<std::unique_ptr<TraceDbWriter>> create(const std::string& path, std::uint32_t pid);
  ~TraceDbWriter();

  // Writes a batch and the strings interned since the last call, in one transaction.
  Result<void> append(const RecordBatch& batch, const StringPool& strings);
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
