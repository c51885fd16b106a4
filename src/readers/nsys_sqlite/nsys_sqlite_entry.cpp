// The Nsight Systems export reader in the registry: SQLite files, plain or gzip-compressed.
#include "readers/gzip_file.hpp"
#include "readers/nsys_sqlite/nsys_sqlite_reader.hpp"
#include "readers/reader_registry.hpp"

namespace kernscope::readers {
namespace {

// Any SQLite file may be an export (its tables are checked when it is read, with a clear error
// when they are not nsys's): kMaybe, so a reader that recognises its own SQLite dialect wins.
Match sniff(const Probe& probe) {
  return nsys::sniff_sqlite(probe.head.data(), probe.head.size()) ? Match::kMaybe : Match::kNo;
}

Result<Trace> read(const Probe& probe, const OpenOptions& options) {
  if (!probe.gzip) {
    auto db = nsys::Database::open_file(probe.path);
    if (!db) return std::unexpected(db.error());
    return nsys::read_export(*db, probe.path, options, &db->file_path());  // a recovered copy's, where one was made
  }
  // Compressed exports are inflated into memory and given to SQLite as an image (no temporary file).
  auto bytes = inflate_gzip(probe.path);
  if (!bytes) return std::unexpected(bytes.error());
  auto db = nsys::Database::open_image(std::move(*bytes), probe.path);
  if (!db) return std::unexpected(db.error());
  return nsys::read_export(*db, probe.path, options);
}

}  // namespace

ReaderEntry nsys_sqlite_reader() { return {"nsys-sqlite", 10, sniff, read}; }

}  // namespace kernscope::readers
