// A small RAII facade over the sqlite3 C API: the reader's only contact with SQLite.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"

namespace kernscope::nsys {

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();

  // true: a row is ready; false: done. Errors (corruption, I/O) come back as kBadInput.
  Result<bool> step();
  std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string_view text(int col) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// A private copy of a database and the -journal or -wal its writer left beside it, in a
// temporary folder removed with this object.
class TemporaryCopy;

class Database {
 public:
  Database() = default;
  Database(Database&& other) noexcept;
  Database& operator=(Database&&) = delete;
  ~Database();

  // Opens a file read-only. The user's files are never written to. Usually the file is the whole
  // database and is opened immutable (no locks, no journal: the fast path). Where a writer left a
  // non-empty -journal (a transaction it did not finish) or -wal (transactions not yet copied into
  // the file) beside it, the file alone is not what SQLite would read: then the file and that
  // sidecar are copied to a temporary folder, SQLite rolls back or applies it there, and the
  // connection reads the copy (removed when this Database is destroyed).
  static Result<Database> open_file(const std::string& path);
  // Opens an in-memory image (a decompressed .sqlite.gz); the database takes ownership of `bytes`.
  static Result<Database> open_image(std::vector<unsigned char>&& bytes, const std::string& label);

  // The file this connection reads (the temporary copy when there is one; empty for an image):
  // open_file(file_path()) opens more connections to the same content, on the fast path.
  const std::string& file_path() const { return file_path_; }

  Result<Statement> prepare(std::string_view sql) const;
  Result<std::set<std::string>> tables() const;
  Result<std::set<std::string>> columns(const std::string& table) const;
  std::string last_error() const;

 private:
  explicit Database(sqlite3* db, std::string file_path = {});
  Result<std::set<std::string>> names(const std::string& sql) const;
  sqlite3* db_ = nullptr;
  std::string file_path_;
  std::unique_ptr<TemporaryCopy> copy_;
};

}  // namespace kernscope::nsys
