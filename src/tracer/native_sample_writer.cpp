#include "tracer/native_sample_writer.hpp"

#include <sqlite3.h>

#include <map>
#include <set>
#include <unordered_map>

#include "tracer/sqlite_statement.hpp"

namespace kernscope::tracer {

const char* const kNativeFramesNote =
    "native frames only (SIGPROF to every thread at each tick, unwound with glibc's backtrace(), at most 128 "
    "frames; named after the run from each module's symbol table, else its dynamic symbols): a frame no symbol "
    "covers (stripped binaries, generated code) is its module and offset, flagged unresolved; code without unwind "
    "tables ends a stack; threads that block SIGPROF are sampled when they unblock it";

namespace {

// The tables as the Python sampler (kernscope_host.py) creates them when the tracer wrote none.
constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE IF NOT EXISTS PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE IF NOT EXISTS META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE IF NOT EXISTS COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL,
  cpu INTEGER, threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL,
  module INTEGER NOT NULL, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER,
  originalIP INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
CREATE TABLE IF NOT EXISTS KERNSCOPE_HOST_INFO (name TEXT NOT NULL, value TEXT);
)";

struct Db {
  sqlite3* handle = nullptr;
  ~Db() {
    if (handle) sqlite3_close(handle);
  }
};

std::int64_t single_int(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  std::int64_t value = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    value = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  return value;
}

}  // namespace

Result<void> append_native_samples(const std::string& path, std::uint32_t pid, const std::string& process_name,
                                   const NativeSamples& samples, NativeSymbolizer& symbols,
                                   const std::vector<std::pair<std::string, std::string>>& info) {
  Db db;
  auto fail = [&](const std::string& what) -> Result<void> {
    const std::string why = db.handle ? sqlite3_errmsg(db.handle) : "cannot open";
    if (db.handle) sqlite3_exec(db.handle, "ROLLBACK", nullptr, nullptr, nullptr);
    return make_error(ErrorCode::kIo, path + ": native samples not written (" + what + "): " + why);
  };
  if (sqlite3_open_v2(path.c_str(), &db.handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    return fail("open");
  }
  sqlite3_busy_timeout(db.handle, 10'000);
  if (sqlite3_exec(db.handle, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) return fail("tables");
  if (sqlite3_exec(db.handle, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return fail("begin");

  const std::int64_t global_pid = static_cast<std::int64_t>(pid) << 24;
  auto global_tid = [&](std::uint32_t tid) { return global_pid | (static_cast<std::int64_t>(tid) & 0xFFFFFF); };
  if (single_int(db.handle, "SELECT count(*) FROM PROCESSES") == 0) {
    Statement p(db.handle, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)");
    if (!p.i64(1, global_pid).i64(2, pid).text(3, process_name).step()) return fail("process");
    Statement m(db.handle, "INSERT INTO META_DATA_EXPORT (name, value) VALUES ('EXPORT_PRODUCT_VERSION', 'kernscope native sampler')");
    if (!m.step()) return fail("metadata");
  }

  std::int64_t next_string = single_int(db.handle, "SELECT coalesce(max(id), 0) FROM StringIds") + 1;
  std::unordered_map<std::string, std::int64_t> strings;
  auto string_id = [&](const std::string& value) {
    auto [it, inserted] = strings.emplace(value, next_string);
    if (inserted) ++next_string;
    return it->second;
  };

  // Each distinct stack's frames, named once.
  struct Row {
    std::int64_t symbol, module, unresolved, address;
  };
  std::vector<std::vector<Row>> frames(samples.stacks.size());
  for (std::size_t s = 0; s < samples.stacks.size(); ++s) {
    const auto& pcs = samples.stacks[s];
    for (std::size_t depth = 0; depth < pcs.size(); ++depth) {
      const NativeFrame& f = symbols.resolve(pcs[depth], depth > 0);
      frames[s].push_back({string_id(f.symbol), string_id(f.module), f.unresolved ? 1 : 0, static_cast<std::int64_t>(pcs[depth])});
    }
  }

  const std::int64_t first_id = single_int(db.handle, "SELECT coalesce(max(id), 0) FROM COMPOSITE_EVENTS") + 1;
  Statement event(db.handle, "INSERT INTO COMPOSITE_EVENTS (id, start, globalTid, cpuCycles) VALUES (?, ?, ?, 0)");
  Statement chain(db.handle,
                  "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, unresolved, originalIP, stackDepth) "
                  "VALUES (?, ?, ?, ?, ?, ?)");
  if (!event.ok() || !chain.ok()) return fail("prepare");
  for (std::size_t i = 0; i < samples.time_ns.size(); ++i) {
    const std::int64_t id = first_id + static_cast<std::int64_t>(i);
    if (!event.i64(1, id).i64(2, samples.time_ns[i]).i64(3, global_tid(samples.tid[i])).step()) return fail("samples");
    const auto& rows = frames[samples.stack[i]];
    for (std::size_t depth = 0; depth < rows.size(); ++depth) {
      const Row& r = rows[depth];
      if (!chain.i64(1, id).i64(2, r.symbol).i64(3, r.module).i64(4, r.unresolved).i64(5, r.address).i64(6, static_cast<std::int64_t>(depth)).step()) {
        return fail("frames");
      }
    }
  }

  // Names of the sampled threads the tracer did not name (those that made no CUDA call).
  std::set<std::int64_t> named;
  {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db.handle, "SELECT globalTid FROM ThreadNames", -1, &stmt, nullptr) == SQLITE_OK) {
      while (sqlite3_step(stmt) == SQLITE_ROW) named.insert(sqlite3_column_int64(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  std::set<std::uint32_t> sampled(samples.tid.begin(), samples.tid.end());
  Statement name(db.handle, "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 0, ?)");
  for (const auto& [tid, thread_name] : samples.thread_names) {
    if (!sampled.contains(tid) || named.contains(global_tid(tid)) || thread_name.empty()) continue;
    if (!name.i64(1, string_id(thread_name)).i64(2, global_tid(tid)).step()) return fail("thread names");
  }

  Statement string(db.handle, "INSERT INTO StringIds (id, value) VALUES (?, ?)");
  for (const auto& [value, id] : strings) {
    if (!string.i64(1, id).text(2, value).step()) return fail("strings");
  }
  Statement row(db.handle, "INSERT INTO KERNSCOPE_HOST_INFO (name, value) VALUES (?, ?)");
  for (const auto& [key, value] : info) {
    if (!row.text(1, key).text(2, value).step()) return fail("host info");
  }
  if (!row.text(1, "native_frames").text(2, kNativeFramesNote).step()) return fail("host info");
  if (sqlite3_exec(db.handle, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return fail("commit");
  return {};
}

}  // namespace kernscope::tracer
