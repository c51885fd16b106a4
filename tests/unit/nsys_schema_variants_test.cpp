// Exports of older nsys versions lack columns and tables. These tests build small SQLite files with
// those older column sets and check that the reader adapts: absent data degrades the reports that
// need it, with a note, and never fails the others. Expected numbers are computed by hand from the
// rows inserted here.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/reports.hpp"
#include "model/trace_filter.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

namespace fs = std::filesystem;

class TempDb {
 public:
  explicit TempDb(const std::string& name) : path_(fs::temp_directory_path() / ("kernscope_test_" + name + ".sqlite")) {
    fs::remove(path_);
    sqlite3_open(path_.c_str(), &db_);
  }
  ~TempDb() {
    if (db_) sqlite3_close(db_);
    fs::remove(path_);
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
  }
  std::string close() {
    sqlite3_close(db_);
    db_ = nullptr;
    return path_.string();
  }

 private:
  fs::path path_;
  sqlite3* db_ = nullptr;
};

std::string csv(const Trace& t, const std::string& report) {
  auto table = run_report(t, parse_report(report).value());
  if (!table) return "ERROR: " + table.error().message;
  std::ostringstream out;
  render(out, *table, RenderOptions{Format::kCsv, TimeUnit::kNs});
  return out.str();
}

// The column set of a 2022-era export: no greenContextId, mangledName or graphNodeId, NVTX without
// domainId/textId, no enum tables, EXPORT_META_DATA instead of META_DATA_EXPORT.
void build_2022_style(TempDb& db) {
  db.exec("CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);"
          "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '2.7.1');"
          "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
          "INSERT INTO StringIds VALUES (1, 'gemv'), (2, 'cudaLaunchKernel_v7000'), (3, 'norm'), (4, 'worker');"
          "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
          "INSERT INTO TARGET_INFO_GPU VALUES (0, 'Old GPU');"
          "CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);"
          "INSERT INTO ThreadNames VALUES (4, 10, (100 << 24) | 1);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,"
          " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,"
          " gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,"
          " registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, launchType INTEGER);"
          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
          " (1000, 1100, 0, 1, 7, 11, 100 << 24, 1, 1, 4, 1, 1, 128, 1, 1, 32, 0, 0, 0),"
          " (2000, 2300, 0, 1, 7, 12, 100 << 24, 1, 1, 4, 1, 1, 128, 1, 1, 32, 0, 0, 0),"
          " (3000, 3050, 0, 1, 7, 13, 100 << 24, 3, 3, 2, 1, 1, 64, 1, 1, 16, 0, 0, 0);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,"
          " correlationId INTEGER, nameId INTEGER, returnValue INTEGER);"
          "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
          " (900, 950, 0, (100 << 24) | 1, 11, 2, 0), (1900, 1960, 0, (100 << 24) | 1, 12, 2, 0),"
          " (2900, 2930, 0, (100 << 24) | 1, 13, 2, 0);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,"
          " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER,"
          " srcKind INTEGER, dstKind INTEGER);"
          "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (500, 600, 0, 1, 7, 10, 100 << 24, 2000000, 1, 0, 2);"
          "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, rangeId INTEGER, category INTEGER,"
          " color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER);"
          "INSERT INTO NVTX_EVENTS VALUES (800, 3500, 59, NULL, NULL, NULL, 'step', (100 << 24) | 1, NULL);");
}

TEST(SchemaVariants, OldColumnSetsReadWithNotes) {
  TempDb db("old2022");
  build_2022_style(db);
  auto trace = open_trace(db.close());
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->source.schema_version, "2.7.1");
  EXPECT_EQ(trace->kernels.size(), 3u);
  EXPECT_FALSE(trace->has_mangled_names);
  EXPECT_FALSE(trace->has_green_context);
  EXPECT_FALSE(trace->has(EventKind::kMemset));
  auto has_note = [&](std::string_view needle) {
    return std::any_of(trace->notes.begin(), trace->notes.end(), [&](const Note& n) { return n.text.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has_note("mangled"));
  EXPECT_TRUE(has_note("domainId"));
  EXPECT_TRUE(has_note("ENUM_CUDA_MEMCPY_OPER"));

  // gemv: 100 + 300 ns = 400 (88.9 %), norm: 50 ns; mean 200, median 200, stdev sqrt(20000).
  EXPECT_EQ(csv(*trace, "cuda_gpu_kern_sum"),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "88.9,400,2,200.0,200.0,100,300,141.4,gemv\n"
            "11.1,50,1,50.0,50.0,50,50,0.0,norm\n");
  // :mangled falls back to the demangled name when the column is absent, as nsys does.
  EXPECT_EQ(csv(*trace, "cuda_gpu_kern_sum:mangled"), csv(*trace, "cuda_gpu_kern_sum"));
  // API names lose their version suffix.
  EXPECT_NE(csv(*trace, "cuda_api_sum").find(",cudaLaunchKernel\n"), std::string::npos);
  // The memcpy direction comes from CUPTI's standard labels.
  EXPECT_NE(csv(*trace, "cuda_gpu_mem_time_sum").find("[CUDA memcpy Host-to-Device]"), std::string::npos);
  // Inline NVTX text with no domain column: the range is ":step", 2700 ns.
  EXPECT_EQ(csv(*trace, "nvtx_pushpop_sum"),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Range\n"
            "100.0,2700,1,2700.0,2700.0,2700,2700,0.0,:step\n");
  // All three kernels were launched inside "step" on thread 1.
  const std::string projected = csv(*trace, "nvtx_kern_sum");
  EXPECT_NE(projected.find(":step,PushPop,100,1,1,2,400,"), std::string::npos) << projected;
  // Empty green-context column in the GPU trace; the device named from TARGET_INFO_GPU.
  const std::string gpu_trace = csv(*trace, "cuda_gpu_trace");
  EXPECT_NE(gpu_trace.find("Old GPU (0),1,,7,gemv"), std::string::npos) << gpu_trace;
  EXPECT_NE(csv(*trace, "cuda_api_trace").find(",10,worker"), std::string::npos);
}

TEST(SchemaVariants, MissingTablesSkipOnlyTheirReports) {
  TempDb db("nonvtx");
  db.exec("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
          "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'k');"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, globalPid INTEGER, demangledName INTEGER);"
          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 1);");
  auto trace = open_trace(db.close());
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(csv(*trace, "cuda_gpu_kern_sum").substr(0, 4), "Time");
  for (const char* report : {"nvtx_sum", "cuda_api_sum", "osrt_sum", "cuda_kern_exec_sum", "cuda_gpu_trace", "cuda_api_trace"}) {
    auto table = run_report(*trace, parse_report(report).value());
    ASSERT_FALSE(table) << report;
    EXPECT_EQ(table.error().code, ErrorCode::kNoData) << report;
  }
}

TEST(BadInput, NotAnExportOrNotSqlite) {
  TempDb db("notnsys");
  db.exec("CREATE TABLE people (name TEXT);");
  auto not_nsys = open_trace(db.close());
  ASSERT_FALSE(not_nsys);
  EXPECT_EQ(not_nsys.error().code, ErrorCode::kBadInput);
  EXPECT_NE(not_nsys.error().message.find("not an Nsight Systems export"), std::string::npos);

  const auto text = fs::temp_directory_path() / "kernscope_test_text.sqlite";
  std::ofstream(text) << "hello, this is not a database\n";
  auto not_sqlite = open_trace(text.string());
  ASSERT_FALSE(not_sqlite);
  EXPECT_EQ(not_sqlite.error().code, ErrorCode::kBadInput);
  fs::remove(text);

  auto missing = open_trace("/nonexistent/trace.sqlite");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(BadInput, TruncatedExportFailsCleanly) {
  TempDb db("trunc");
  build_2022_style(db);
  // Enough rows to span many pages, then cut the file in half.
  db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)"
          " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i, i + 5, 0, 1, 7, i, 100 << 24, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 FROM n;");
  const std::string path = db.close();
  const auto size = fs::file_size(path);
  fs::resize_file(path, size / 2);
  auto trace = open_trace(path);
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(trace.error().message.find('\n'), std::string::npos) << "one line";
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

TEST(SummaryColumnsOnly, ReportsThatNeedDetailsRefuseAndFiltersStillWork) {
  const auto dir = std::filesystem::path(KERNSCOPE_TEST_FIXTURES) / "nsys/cloverleaf_perlmutter";
  const auto path = (dir / "trace.sqlite.xz").string();
  auto full = open_trace(path);
  OpenOptions summary_only;
  summary_only.detail_kinds = 0;
  auto lean = open_trace(path, summary_only);
  ASSERT_TRUE(full && lean);
  EXPECT_TRUE(lean->kernels.grid_x.empty());
  EXPECT_EQ(lean->kernels.size(), full->kernels.size());
  // The summaries from the lean load are nsys's own (its gold output for this file), not merely
  // equal to the full load's: a Count off by one in cuda_kern_exec_sum, or an error message, is
  // the same in both loads and passed that comparison; it fails this one.
  for (const std::string report : {"cuda_gpu_kern_sum", "cuda_kern_exec_sum"}) {
    const std::string got = csv(*lean, report), want = testing::read_file(testing::existing(dir / ("gold/" + report + ".csv")));
    EXPECT_TRUE(got == want) << report << ": " << testing::first_difference(got, want);
  }
  auto refused = run_report(*lean, parse_report("cuda_gpu_trace").value());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInternal);
  // Filtering keeps unloaded columns empty instead of reading past them, and keeps the same
  // kernels as filtering the full load.
  const FilterSpec window{TimeWindow{600'000'000, 700'000'000}, std::nullopt};
  const auto unfiltered = full->kernels.size();
  auto filter = resolve_filter(*lean, window);
  ASSERT_TRUE(filter);
  apply_filter(*lean, *filter);
  apply_filter(*full, resolve_filter(*full, window).value());
  EXPECT_TRUE(lean->kernels.grid_x.empty());
  EXPECT_GT(lean->kernels.size(), 0u);
  EXPECT_LT(lean->kernels.size(), unfiltered);
  EXPECT_EQ(lean->kernels.start_ns, full->kernels.start_ns);
  EXPECT_EQ(csv(*lean, "cuda_gpu_kern_sum"), csv(*full, "cuda_gpu_kern_sum"));
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

// nsys's scheduling events (SCHED_EVENTS) become the CUDA-calling threads' CPU stretches: busy from a
// switch in to the next switch out, idle from a switch out to the next switch in; a repeated switch
// changes nothing, the time after the last switch is not known, and threads that made no CUDA call
// (and rows of no thread) are left out. Expected stretches by hand from the rows inserted.
TEST(SchemaVariants, SchedulingEventsGiveTheCallingThreadsCpuStretches) {
  TempDb db("sched_events");
  build_2022_style(db);
  db.exec("CREATE TABLE SCHED_EVENTS (start INTEGER, cpu INTEGER, isSchedIn INTEGER,"
          " globalTid INTEGER, threadState INTEGER, threadBlock INTEGER);"
          "INSERT INTO SCHED_EVENTS VALUES (700, 0, 1, (100 << 24) | 1, 0, NULL), (100, 0, 1, (100 << 24) | 1, 0, NULL),"
          " (400, 0, 0, (100 << 24) | 1, 0, NULL), (750, 1, 1, (100 << 24) | 1, 0, NULL),"
          " (1500, 1, 0, (100 << 24) | 1, 0, NULL), (2000, 1, 1, (100 << 24) | 1, 0, NULL),"
          " (300, 2, 1, (100 << 24) | 2, 0, NULL), (900, 2, 0, (100 << 24) | 2, 0, NULL), (50, 3, 1, NULL, 0, NULL),"
          " (NULL, 0, 0, (100 << 24) | 1, 0, NULL), (1200, 0, NULL, (100 << 24) | 1, 0, NULL);");  // rows of no time or kind: left out
  const std::string path = db.close();
  // Read whatever the plan, as steps are found in every plan that loads calls and ranges (ops reads no details).
  OpenOptions lean;
  lean.detail_kinds = 0;
  auto lean_trace = open_trace(path, lean);
  ASSERT_TRUE(lean_trace) << lean_trace.error().message;
  EXPECT_EQ(lean_trace->thread_cpu.size(), 4u);
  auto trace = open_trace(path);
  ASSERT_TRUE(trace) << trace.error().message;
  const auto& c = trace->thread_cpu;
  ASSERT_EQ(c.size(), 4u);
  const std::int64_t tid = (std::int64_t{100} << 24) | 1;
  const std::vector<std::tuple<TimeNs, TimeNs, std::int64_t, int>> want = {
      {100, 400, 300, 1}, {400, 700, 0, 0}, {700, 1500, 800, 1}, {1500, 2000, 0, 0}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(c.global_tid[i], tid);
    EXPECT_EQ(std::make_tuple(c.start_ns[i], c.end_ns[i], c.cpu_ns[i], static_cast<int>(c.busy[i])), want[i]) << i;
  }
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

// The grids of kernels that launch one block per token (model/token_grids.hpp) are read whatever
// the plan: with the kernels' details (from the grid) and without (one scan for those kernels
// alone), the same by hand: 1049 and 1 for the two KV-cache writes, 0 for the other kernels.
TEST(SchemaVariants, TokenGridsAreReadWhateverThePlan) {
  for (const bool details : {true, false}) {
    TempDb db(details ? "token_grids_detail" : "token_grids_lean");
    build_2022_style(db);
    db.exec("INSERT INTO StringIds VALUES (5, 'void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>');"
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
            " (4000, 4010, 0, 1, 7, 14, 100 << 24, 5, 5, 1049, 1, 1, 512, 1, 1, 32, 0, 0, 0),"
            " (5000, 5010, 0, 1, 7, 15, 100 << 24, 5, 5, 1, 1, 1, 512, 1, 1, 32, 0, 0, 0);");
    OpenOptions options;
    if (!details) options.detail_kinds = 0;
    auto trace = open_trace(db.close(), options);
    ASSERT_TRUE(trace) << trace.error().message;
    EXPECT_EQ(trace->kernels.grid_x.empty(), !details);
    EXPECT_EQ(trace->kernels.token_grid, (std::vector<std::int32_t>{0, 0, 0, 1049, 1})) << details;
  }
  TempDb none("token_grids_none");
  build_2022_style(none);
  auto trace = open_trace(none.close());
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_TRUE(trace->kernels.token_grid.empty());  // no such kernel: nothing kept
}

}  // namespace
}  // namespace kernscope
