// The nsys columns kernscope reads (kernscope/column_defs.hpp) are columns of the schema its own
// tracer writes (src/tracer/nsys_schema.sql, nsys's names): the reader's list and the writer's
// schema cannot drift apart unseen (a misspelt name would read as absent: its fallback, 0, on
// every row of kernscope's own traces).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <string>

#include "kernscope/column_defs.hpp"
#include "tracer/trace_db_writer.hpp"

namespace kernscope {
namespace {

std::set<std::string> columns_of(sqlite3* db, const std::string& table) {
  std::set<std::string> out;
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, ("SELECT name FROM pragma_table_info('" + table + "')").c_str(), -1, &s, nullptr), SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) out.insert(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  return out;
}

template <class Columns>
void expect_read_columns_in_schema(sqlite3* db, const std::string& table) {
  const auto schema = columns_of(db, table);
  ASSERT_FALSE(schema.empty()) << table << " is not in the tracer's schema";
  std::size_t read = 0;
  for_each_column_def<Columns>([&](const auto& def) {
    if (!def.from_nsys || !def.nsys) return;
    ++read;
    EXPECT_TRUE(schema.contains(def.nsys)) << table << "." << def.nsys << " is read but the tracer's schema has no such column";
  });
  EXPECT_GT(read, 0u) << table;
}

TEST(TracerSchema, EveryColumnTheReaderNamesIsInTheTracersSchema) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, tracer::nsys_schema_sql(), nullptr, nullptr, nullptr), SQLITE_OK);
  expect_read_columns_in_schema<KernelColumns>(db, "CUPTI_ACTIVITY_KIND_KERNEL");
  expect_read_columns_in_schema<ApiCallColumns>(db, "CUPTI_ACTIVITY_KIND_RUNTIME");
  expect_read_columns_in_schema<MemcpyColumns>(db, "CUPTI_ACTIVITY_KIND_MEMCPY");
  expect_read_columns_in_schema<MemsetColumns>(db, "CUPTI_ACTIVITY_KIND_MEMSET");
  expect_read_columns_in_schema<GraphExecColumns>(db, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
  expect_read_columns_in_schema<SyncColumns>(db, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
  expect_read_columns_in_schema<OverheadColumns>(db, "PROFILER_OVERHEAD");
  expect_read_columns_in_schema<GpuSampleColumns>(db, "KERNSCOPE_GPU_SAMPLES");
  sqlite3_close(db);
}

}  // namespace
}  // namespace kernscope
