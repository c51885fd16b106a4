// A small RAII facade over the sqlite3 C API: the reader's only contact with SQLite.
#pragma once

#include <sqlite3.h>

#include <cstdint>
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

class Database {
 public:
  Database() = default;
  Database(Database&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Database& operator=(Database&&) = delete;
  ~Database();

  // Opens a file read-only and immutable (no locks, no journal): exports are never written to.
  static Result<Database> open_file(const std::string& path);
  // Opens an in-memory image (a decompressed .sqlite.gz); the database takes ownership of `bytes`.
  static Result<Database> open_image(std::vector<unsigned char>&& bytes, const std::string& label);

  Result<Statement> prepare(std::string_view sql) const;
  Result<std::set<std::string>> tables() const;
  Result<std::set<std::string>> columns(const std::string& table) const;
  std::string last_error() const;

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace kernscope::nsys
