// The Nsight Systems export reader in the registry: SQLite files, plain or gzip/xz-compressed.
#include "readers/compressed_file.hpp"
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
  if (probe.compression == Compression::kNone) {
    auto db = nsys::Database::open_file(probe.path);
    if (!db) return std::unexpected(db.error());
    return nsys::read_export(*db, probe.path, options, &db->file_path());  // a recovered copy's, where one was made
  }
  // Compressed exports are decompressed into memory and given to SQLite as an image (no temporary file).
  auto bytes = decompress_file(probe.path, probe.compression);
  if (!bytes) return std::unexpected(bytes.error());
  auto db = nsys::Database::open_image(std::move(*bytes), probe.path);
  if (!db) return std::unexpected(db.error());
  return nsys::read_export(*db, probe.path, options);
}

}  // namespace

ReaderEntry nsys_sqlite_reader() { return {"nsys-sqlite", 10, sniff, read}; }

}  // namespace kernscope::readers
