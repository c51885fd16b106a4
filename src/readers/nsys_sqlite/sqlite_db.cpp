#include "readers/nsys_sqlite/sqlite_db.hpp"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kernscope::nsys {

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  return make_error(ErrorCode::kBadInput,
                    std::string("cannot read the SQLite file: ") + sqlite3_errmsg(db) +
                        " (truncated or corrupted?)");
}

std::string_view Statement::text(int col) const {
  const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!bytes) return {};
  return {bytes, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

class TemporaryCopy {
 public:
  explicit TemporaryCopy(std::filesystem::path dir) : dir_(std::move(dir)) {}
  TemporaryCopy(const TemporaryCopy&) = delete;
  TemporaryCopy& operator=(const TemporaryCopy&) = delete;
  ~TemporaryCopy() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path file() const { return dir_ / "trace.sqlite"; }

 private:
  std::filesystem::path dir_;
};

Database::Database(sqlite3* db, std::string file_path) : db_(db), file_path_(std::move(file_path)) {}

Database::Database(Database&& other) noexcept
    : db_(other.db_), file_path_(std::move(other.file_path_)), copy_(std::move(other.copy_)) {
  other.db_ = nullptr;
}

Database::~Database() {
  if (db_) sqlite3_close(db_);  // before copy_ removes the file it reads
}

namespace {
// SQLite keeps memory statistics under a global mutex taken on every allocation; with several
// connections scanning in parallel that mutex serialises them. Must run before SQLite starts.
const bool kMemStatusOff = [] {
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  return true;
}();

// The URI form needs escaping of '?' and '#' in the path, so build it with percent-encoding.
std::string file_uri(const std::string& path, const char* query) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?" + query;
}

Result<sqlite3*> open_immutable(const std::string& path, const std::string& label) {
  sqlite3* db = nullptr;
  // immutable=1 lets SQLite skip locking and change detection, and ignore any -journal or -wal:
  // only for a file that is the whole database. NOMUTEX: one connection per reader, used by one
  // thread; without it every sqlite3_column_* call takes the connection mutex, which cost ~10% of
  // a full scan.
  const int rc = sqlite3_open_v2(file_uri(path, "mode=ro&immutable=1").c_str(), &db,
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    if (db) sqlite3_close(db);
    return make_error(ErrorCode::kBadInput, label + ": cannot open as SQLite: " + message);
  }
  // No mmap: it saves ~20% of a scan, but mapped pages count in the resident set, and a 1 GB
  // export must be summarised in less memory than its own size.
  return db;
}

// The sidecars a writer cut short leaves beside `file` (named as SQLite names them, beside the
// file a symbolic link points to) that are not empty: a -journal holding the pages of a
// transaction it did not finish, a -wal holding transactions not yet copied into the file.
std::vector<std::string> pending_sidecars(const std::filesystem::path& file) {
  std::vector<std::string> suffixes;
  for (const char* suffix : {"-journal", "-wal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file.string() + suffix, ec);
    if (!ec && size > 0) suffixes.emplace_back(suffix);
  }
  return suffixes;
}

// What moves when a writer still at work goes on: the file (a checkpoint, a commit with the rollback
// journal) and the -wal's header (a new generation of the log after a checkpoint). Frames appended
// to the log do not matter: SQLite ignores a last frame copied half-written.
std::string writer_state(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  const auto time = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
  std::string state = std::to_string(size) + "@" + std::to_string(time) + ":";
  std::ifstream wal(file.string() + "-wal", std::ios::binary);
  char header[32] = {};
  wal.read(header, sizeof header);
  return state.append(header, static_cast<std::size_t>(wal.gcount()));
}

// Copies `file` and its sidecars into a new temporary folder and lets SQLite, on a read-write
// connection to the copy, roll the journal back or apply the log, then fold everything into the
// copy (journal_mode=DELETE): the copy is then the whole database, readable immutable. The
// user's files are only read. A read-only connection cannot do this: on a hot journal SQLite
// refuses it ("attempt to write a readonly database"), and on a WAL it would write the -shm beside
// the user's file.
Result<std::unique_ptr<TemporaryCopy>> recover_copy(const std::filesystem::path& file,
                                                     const std::vector<std::string>& sidecars,
                                                     const std::string& label) {
  std::error_code ec;
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "kernscope-recover-XXXXXX").string();
  const std::string why = label + ": its writer left " + file.filename().string() + sidecars.front() +
                          " beside it (cut short, or still writing), which needs a temporary copy to be read";
  if (ec || !::mkdtemp(pattern.data())) {
    return make_error(ErrorCode::kIo, why + ", and no temporary folder could be made (TMPDIR?)");
  }
  auto copy = std::make_unique<TemporaryCopy>(pattern);
  // A writer still at work may change the files during the copy (a checkpoint rewrites pages of
  // the file for a while); then the copy is made again, a little later each time.
  for (int attempt = 1;; ++attempt) {
    const std::string before = writer_state(file);
    for (const std::string suffix : {"", "-journal", "-wal"}) {
      const bool wanted = suffix.empty() || std::find(sidecars.begin(), sidecars.end(), suffix) != sidecars.end();
      if (!ec && wanted) {
        std::filesystem::copy_file(file.string() + suffix, copy->file().string() + suffix,
                                   std::filesystem::copy_options::overwrite_existing, ec);
      }
    }
    if (ec) return make_error(ErrorCode::kIo, why + ": " + ec.message() + " (space in " + pattern + "?)");
    if (writer_state(file) == before) break;
    if (attempt == 10) return make_error(ErrorCode::kIo, why + ", and it kept changing while copied: read it when its writer has ended");
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
  }

  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file_uri(copy->file().string(), "mode=rw").c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr);
  std::string mode;
  // The first read rolls a hot journal back or reads the log; the journal mode change then copies
  // the log into the file and deletes it.
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=DELETE", -1, &stmt, nullptr);
    if (rc == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      if (const auto* text = sqlite3_column_text(stmt, 0)) mode = reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(stmt);
  }
  const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
  if (db) sqlite3_close(db);
  if (rc != SQLITE_OK || mode != "delete") {
    return make_error(ErrorCode::kBadInput, label + ": cannot read as SQLite with its " +
                                                file.filename().string() + sidecars.front() + ": " + message);
  }
  return copy;
}

}  // namespace

Result<Database> Database::open_file(const std::string& path) {
  (void)kMemStatusOff;
  std::error_code ec;
  std::filesystem::path file = std::filesystem::canonical(path, ec);
  if (ec) file = path;
  auto sidecars = pending_sidecars(file);
  if (sidecars.empty()) {
    auto db = open_immutable(path, path);
    if (!db) return std::unexpected(db.error());
    return Database(*db, path);
  }
  auto copy = recover_copy(file, sidecars, path);
  // A writer still at work may have removed its sidecar meanwhile (a commit with the rollback
  // journal, the end of a trace): then look again.
  if (!copy && pending_sidecars(file) != sidecars) return open_file(path);
  if (!copy) return std::unexpected(copy.error());
  const std::string copied = (*copy)->file().string();
  auto db = open_immutable(copied, path);
  if (!db) return std::unexpected(db.error());
  Database database(*db, copied);
  database.copy_ = std::move(*copy);
  return database;
}

Result<Database> Database::open_image(std::vector<unsigned char>&& bytes, const std::string& label) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    if (db) sqlite3_close(db);
    return make_error(ErrorCode::kInternal, "cannot open an in-memory SQLite database");
  }
  const auto size = static_cast<sqlite3_int64>(bytes.size());
  auto* image = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  if (!image) {
    sqlite3_close(db);
    return make_error(ErrorCode::kInternal, label + ": out of memory");
  }
  std::memcpy(image, bytes.data(), bytes.size());
  bytes = {};  // release the decompressed copy before SQLite starts using its own
  // A file in WAL mode (bytes 18-19 of the header are 2), compressed without its -wal: the file
  // alone is the database as of its last checkpoint, but SQLite will not open an image in WAL
  // mode. 1 is the rollback-journal mode SQLite writes when it leaves WAL mode.
  if (size >= 20 && image[18] == 2 && image[19] == 2) image[18] = image[19] = 1;
  const int rc = sqlite3_deserialize(db, "main", image, size, size,
                                     SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) {
    sqlite3_close(db);
    return make_error(ErrorCode::kBadInput, label + ": not a valid SQLite image");
  }
  return Database(db);
}

Result<Statement> Database::prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return make_error(ErrorCode::kBadInput,
                      std::string("cannot read the SQLite file: ") + sqlite3_errmsg(db_));
  }
  return Statement(stmt);
}

// The first column of every row `sql` returns, as a set (table and column names).
Result<std::set<std::string>> Database::names(const std::string& sql) const {
  auto stmt = prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  std::set<std::string> names;
  while (true) {
    auto row = stmt->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    names.emplace(stmt->text(0));
  }
  return names;
}

Result<std::set<std::string>> Database::tables() const { return names("SELECT name FROM sqlite_master WHERE type IN ('table','view')"); }

Result<std::set<std::string>> Database::columns(const std::string& table) const {
  return names("SELECT name FROM pragma_table_info('" + table + "')");
}

std::string Database::last_error() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

}  // namespace kernscope::nsys
