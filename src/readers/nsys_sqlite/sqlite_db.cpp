#include "readers/nsys_sqlite/sqlite_db.hpp"

#include <cstring>

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

Database::~Database() {
  if (db_) sqlite3_close(db_);
}

namespace {
// SQLite keeps memory statistics under a global mutex taken on every allocation; with several
// connections scanning in parallel that mutex serialises them. Must run before SQLite starts.
const bool kMemStatusOff = [] {
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  return true;
}();
}  // namespace

Result<Database> Database::open_file(const std::string& path) {
  (void)kMemStatusOff;
  sqlite3* db = nullptr;
  // immutable=1 lets SQLite skip locking and change detection; the URI form needs escaping of
  // '?' and '#' in the path, so build it with percent-encoding.
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
  uri += "?mode=ro&immutable=1";
  // NOMUTEX: one connection per reader, used by one thread; without it every sqlite3_column_*
  // call takes the connection mutex, which cost ~10% of a full scan.
  const int rc = sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    if (db) sqlite3_close(db);
    return make_error(ErrorCode::kBadInput, path + ": cannot open as SQLite: " + message);
  }
  // No mmap: it saves ~20% of a scan, but mapped pages count in the resident set, and a 1 GB
  // export must be summarised in less memory than its own size.
  return Database(db);
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

Result<std::set<std::string>> Database::tables() const {
  auto stmt = prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view')");
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

Result<std::set<std::string>> Database::columns(const std::string& table) const {
  auto stmt = prepare("SELECT name FROM pragma_table_info('" + table + "')");
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

std::string Database::last_error() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

}  // namespace kernscope::nsys
