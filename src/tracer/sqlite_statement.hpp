// One prepared SQLite statement, bound and stepped a row at a time: the tracer's writers (the CUDA
// records, the native stack samples) insert through it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace kernscope::tracer {

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  Statement& i64(int col, std::int64_t v) { sqlite3_bind_int64(stmt_, col, v); return *this; }
  Statement& null(int col) { sqlite3_bind_null(stmt_, col); return *this; }
  Statement& text(int col, const std::string& v) {
    sqlite3_bind_text(stmt_, col, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return rc == SQLITE_DONE;
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace kernscope::tracer
