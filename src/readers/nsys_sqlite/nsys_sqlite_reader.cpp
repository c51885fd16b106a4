#include "readers/nsys_sqlite/nsys_sqlite_reader.hpp"

#include "model/token_grids.hpp"
#include "readers/nsys_sqlite/host_tables.hpp"
#include "readers/nsys_sqlite/scheduling_events.hpp"

#include "base/progress.hpp"
#include "model/kineto_names.hpp"

#include "kernscope/column_defs.hpp"
#include "model/columns.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstring>
#include <functional>
#include <atomic>
#include <optional>
#include <memory>
#include <set>
#include <future>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace kernscope::nsys {
namespace {

// A tracer-info value that is a count ("12"), for a note's count; 1 where it is not one.
std::int64_t count_of(const std::string& value) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  return ec == std::errc() && end == value.data() + value.size() && n > 0 ? n : 1;
}

constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr const char* kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr const char* kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr const char* kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr const char* kSyncTable = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
constexpr const char* kNvtxTable = "NVTX_EVENTS";
constexpr const char* kOsrtTable = "OSRT_API";
constexpr const char* kOverheadTable = "PROFILER_OVERHEAD";
constexpr const char* kGraphTraceTable = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";  // --cuda-graph-trace=graph
// kernscope's tracer adds NVML samples and its own bookkeeping to the nsys schema.
constexpr const char* kSamplesTable = "KERNSCOPE_GPU_SAMPLES";
constexpr const char* kTracerInfoTable = "KERNSCOPE_TRACER_INFO";
constexpr const char* kTracerCostTable = "KERNSCOPE_TRACER_COST";
constexpr const char* kThreadCpuTable = "KERNSCOPE_THREAD_CPU";
constexpr const char* kCaptureWindowsTable = "KERNSCOPE_CAPTURE_WINDOWS";

// Maps nsys StringIds ids to pool ids. Ids are dense in practice; a map covers the rest.
class StringMap {
 public:
  void add(std::int64_t nsys_id, StringId pool_id) {
    if (nsys_id >= 0 && nsys_id < (1 << 26)) {
      if (static_cast<std::size_t>(nsys_id) >= dense_.size()) dense_.resize(nsys_id + 1, kNoString);
      dense_[nsys_id] = pool_id;
    } else {
      sparse_[nsys_id] = pool_id;
    }
  }
  StringId lookup(std::int64_t nsys_id) const {
    if (nsys_id >= 0 && static_cast<std::size_t>(nsys_id) < dense_.size()) return dense_[nsys_id];
    auto it = sparse_.find(nsys_id);
    return it == sparse_.end() ? kNoString : it->second;
  }

 private:
  std::vector<StringId> dense_;
  std::unordered_map<std::int64_t, StringId> sparse_;
};

// A slice of a table by rowid; `whole` reads it all.
struct RowRange {
  bool whole = true;
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::size_t expected_rows = 0;
};

// Builds "SELECT a, coalesce(b, 0), NULL ..." from the columns a table really has, so one loop
// reads every schema version: a missing column reads as its fallback.
struct ColumnSpec {
  const char* name;
  const char* fallback;  // SQL literal used when the column is absent or NULL; nullptr keeps NULL
};

class Reader {
 public:
  Reader(const Database& db, std::string label, const OpenOptions& options, const std::string* file_path)
      : db_(db), label_(std::move(label)), options_(options), file_path_(file_path) {}

  Result<Trace> run(const OpenOptions& options);

 private:
  Result<void> read_meta();
  Result<void> read_strings();
  Result<void> read_enums();
  Result<void> read_devices();
  Result<void> read_processes_and_threads();
  Result<void> read_kernels(const Database& db, KernelColumns& k, const RowRange& range);
  Result<void> read_memcpys(const Database& db, MemcpyColumns& m, const RowRange& range);
  Result<void> read_memsets(const Database& db, MemsetColumns& m, const RowRange& range);
  Result<void> read_api_calls(const Database& db, ApiCallColumns& a, const RowRange& range);
  Result<void> read_syncs(const Database& db, SyncColumns& y, const RowRange& range);
  Result<void> read_nvtx(const Database& db, NvtxColumns& n, const RowRange& range);
  Result<void> read_osrt(const Database& db, OsrtColumns& o, const RowRange& range);
  Result<void> read_overhead(const Database& db, OverheadColumns& o, const RowRange& range);
  Result<void> read_samples(const Database& db, GpuSampleColumns& g, const RowRange& range);
  Result<void> read_graph_execs(const Database& db, GraphExecColumns& g, const RowRange& range);
  Result<void> read_tracer_info();
  Result<void> read_token_grids();
  Result<void> read_capture_windows();
  void map_samples_to_cuda_devices();

  // Runs the SELECT of `specs` over `table`, calling `row` for each result row.
  Result<void> scan(const std::string& table, const std::vector<ColumnSpec>& specs,
                    const std::function<void(const Statement&)>& row) {
    return scan(db_, table, RowRange{}, specs, row);
  }
  Result<void> scan(const Database& db, const std::string& table, const RowRange& range,
                    const std::vector<ColumnSpec>& specs, const std::function<void(const Statement&)>& row);
  // Reads the columns that kernscope/column_defs.hpp lists for nsys's table (with their
  // fallbacks) into their members, a row at a time: every column of part kAlways, the details and
  // the name variants where `details` / `variants` ask for them (the others stay empty); a column
  // the table has none of (nsys == nullptr) is filled with 0 when its part is read. Each definition
  // is a constant in read_row, so a row's reading compiles to what a hand-written reader does.
  template <class Columns>
  Result<void> read_named_columns(const Database& db, const std::string& table, Columns& columns, const RowRange& range,
                                  bool details = true, bool variants = true) {
    auto wanted = [&](ColumnPart part) { return part == ColumnPart::kAlways || (part == ColumnPart::kDetail ? details : variants); };
    std::vector<ColumnSpec> specs;
    for_each_column_def<Columns>([&](const auto& def) {
      if (!def.from_nsys || !wanted(def.part)) return;
      (columns.*def.member).reserve(range.expected_rows);
      if (def.nsys) specs.push_back({def.nsys, def.fallback});
    });
    constexpr std::size_t kColumns = std::tuple_size_v<std::remove_const_t<decltype(ColumnDefs<Columns>::all)>>;
    return scan(db, table, range, specs, [&](const Statement& s) {
      read_row(s, columns, details, variants, std::make_index_sequence<kColumns>{});
    });
  }
  template <class Columns, std::size_t... I>
  void read_row(const Statement& s, Columns& columns, bool details, bool variants, std::index_sequence<I...>) const {
    int position = 0;
    (
        [&] {
          constexpr auto def = std::get<I>(ColumnDefs<Columns>::all);
          if constexpr (def.from_nsys) {
            if constexpr (def.part == ColumnPart::kDetail) {
              if (!details) return;
            } else if constexpr (def.part == ColumnPart::kNameVariant) {
              if (!variants) return;
            }
            auto& column = columns.*def.member;
            using Value = typename std::remove_reference_t<decltype(column)>::value_type;
            if constexpr (def.nsys == nullptr) {
              column.push_back(Value{});
            } else if constexpr (def.interned) {
              column.push_back(str(s, position++));
            } else {
              column.push_back(static_cast<Value>(s.int64(position++)));
            }
          }
        }(),
        ...);
  }
  // Splits a large table into rowid ranges that separate connections scan in parallel.
  std::vector<RowRange> plan_ranges(const std::string& table, bool parallel);
  template <class Columns>
  void schedule(const std::string& table, Columns& target, bool parallel,
                Result<void> (Reader::*read)(const Database&, Columns&, const RowRange&),
                std::vector<std::function<Result<void>(const Database&)>>& tasks,
                std::vector<std::function<void()>>& merges);
  // Notes about missing columns, made before the parallel scans (which must not write shared state).
  Result<void> check_columns();
  Result<std::set<std::string>> columns_of(const std::string& table);
  bool has_table(const std::string& table) const { return tables_.contains(table); }
  StringId str(const Statement& s, int col) const {
    return s.is_null(col) ? kNoString : strings_.lookup(s.int64(col));
  }
  void note(std::string kind, NoteSeverity severity, std::string text, std::int64_t count = 1) {
    trace_.note(std::move(kind), severity, std::move(text), count);
  }

  const Database& db_;
  std::string label_;
  std::unique_ptr<progress::Meter> meter_;  // the progress line (base/progress.hpp): rows read
  std::map<std::uint32_t, std::string> nvml_uuids_;  // kernscope tracer: NVML index -> UUID
  std::vector<std::pair<std::int64_t, StringId>> token_grid_names_;  // StringIds of one-block-per-token kernels: nsys id, pool id
  OpenOptions options_;
  const std::string* file_path_;  // set when more connections to the same file can be opened
  std::size_t database_bytes_ = 0;
  Trace trace_;
  std::set<std::string> tables_;
  std::unordered_map<std::string, std::set<std::string>> columns_;
  StringMap strings_;
};

Result<std::set<std::string>> Reader::columns_of(const std::string& table) {
  if (auto it = columns_.find(table); it != columns_.end()) return it->second;
  auto cols = db_.columns(table);
  if (!cols) return std::unexpected(cols.error());
  return columns_.emplace(table, std::move(*cols)).first->second;
}

Result<void> Reader::check_columns() {
  // Fill the cache that the parallel scans read, for the tables the reader uses (an export has
  // dozens more).
  for (const char* table : {kKernelTable, kMemcpyTable, kMemsetTable, kRuntimeTable, kSyncTable, kNvtxTable,
                            kOsrtTable, kOverheadTable, kSamplesTable, kGraphTraceTable, "StringIds", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
                            "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_SESSION_START_TIME",
                            "ThreadNames", "PROCESSES"}) {
    if (!has_table(table)) continue;
    auto cols = columns_of(table);
    if (!cols) return std::unexpected(cols.error());
  }
  if (has_table(kKernelTable)) {
    const auto& cols = columns_.at(kKernelTable);
    trace_.has_green_context = cols.contains("greenContextId");
    trace_.has_mangled_names = cols.contains("mangledName");
    trace_.has_graph_node_ids = cols.contains("graphNodeId");
    if (!trace_.has_mangled_names) note("no_mangled_names", NoteSeverity::kInfo, "kernels have no mangled names (export predates mangledName)");
    if (!trace_.has_graph_node_ids) note("no_graph_node_ids", NoteSeverity::kInfo, "kernels have no graphNodeId column (older export)");
  }
  if (has_table(kNvtxTable)) {
    const auto& cols = columns_.at(kNvtxTable);
    if (!cols.contains("domainId")) note("no_nvtx_domains", NoteSeverity::kInfo, "NVTX events have no domainId column (older export)");
    if (!cols.contains("textId")) note("no_nvtx_registered_strings", NoteSeverity::kDataLoss, "NVTX events have no textId column: registered strings are unknown");
  }
  return {};
}

Result<void> Reader::scan(const Database& db, const std::string& table, const RowRange& range,
                          const std::vector<ColumnSpec>& specs, const std::function<void(const Statement&)>& row) {
  auto found = columns_.find(table);
  if (found == columns_.end()) return make_error(ErrorCode::kInternal, "columns of " + table + " not checked");
  const auto* cols = &found->second;
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (i) sql += ", ";
    const bool present = cols->contains(specs[i].name);
    const bool null_is_zero = specs[i].fallback && std::string_view(specs[i].fallback) == "0";
    if (present && specs[i].fallback && !null_is_zero) {
      sql += std::string("coalesce(\"") + specs[i].name + "\", " + specs[i].fallback + ")";
    } else if (present) {
      sql += std::string("\"") + specs[i].name + "\"";
    } else {
      sql += specs[i].fallback && !null_is_zero ? specs[i].fallback : "NULL";
    }
  }
  sql += " FROM \"" + table + "\"";
  if (!range.whole) sql += " WHERE rowid BETWEEN " + std::to_string(range.first) + " AND " + std::to_string(range.last);
  auto stmt = db.prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  std::uint64_t rows = 0;
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(Error{more.error().code, label_ + ": " + more.error().message});
    if (!*more) break;
    row(*stmt);
    if (++rows == 65536) {  // the progress line counts blocks of rows, not each one
      if (meter_) meter_->add(rows);
      rows = 0;
    }
  }
  if (meter_) meter_->add(rows);
  return {};
}

Result<void> Reader::read_meta() {
  trace_.source.format = "nsys-sqlite";
  trace_.source.path = label_;
  // The export's metadata table was renamed across versions.
  for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    if (!has_table(table)) continue;
    auto stmt = db_.prepare(std::string("SELECT name, value FROM ") + table);
    if (!stmt) return std::unexpected(stmt.error());
    while (true) {
      auto more = stmt->step();
      if (!more) return std::unexpected(more.error());
      if (!*more) break;
      const auto name = stmt->text(0);
      if (name == "EXPORT_PRODUCT_VERSION") trace_.source.product_version = stmt->text(1);
      if (name == "EXPORT_SCHEMA_VERSION") trace_.source.schema_version = stmt->text(1);
    }
  }
  if (has_table("TARGET_INFO_SESSION_START_TIME")) {
    auto cols = columns_of("TARGET_INFO_SESSION_START_TIME");
    if (!cols) return std::unexpected(cols.error());
    if (cols->contains("utcEpochNs")) {
      auto stmt = db_.prepare("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
      if (!stmt) return std::unexpected(stmt.error());
      auto more = stmt->step();
      if (!more) return std::unexpected(more.error());
      if (*more) trace_.source.session_start_utc_ns = stmt->int64(0);
    }
  }
  return {};
}

Result<void> Reader::read_strings() {
  if (!has_table("StringIds")) {
    trace_.has_string_table = false;
    note("no_string_table", NoteSeverity::kDataLoss, "no StringIds table: names of kernels, API calls and NVTX ranges are unknown");
    return {};
  }
  return scan("StringIds", {{"id", nullptr}, {"value", "''"}}, [&](const Statement& s) {
    const StringId id = trace_.strings.intern(s.text(1));
    strings_.add(s.int64(0), id);
    if (launches_one_block_per_token(s.text(1))) token_grid_names_.push_back({s.int64(0), id});
  });
}

// The grids of kernels that launch one block per token (model/token_grids.hpp): from the grid
// where the plan read it, else for those kernels alone with one more scan of the kernel table, so
// only traces that have them pay for it.
Result<void> Reader::read_token_grids() {
  auto& k = trace_.kernels;
  if (token_grid_names_.empty() || k.size() == 0) return {};
  if (k.grid_x.size() == k.size()) {
    token_grids_from_grids(k, trace_.strings);
    return {};
  }
  // Any failure here (a kernel table that is a view without rowids) leaves the grids unread, said.
  const auto unread = [&](const std::string& why) {
    k.token_grid.clear();
    note("token_grids_unreadable", NoteSeverity::kError, "KV-cache write grids not read (" + why + "): steps' tokens from them are not shown");
    return Result<void>{};
  };
  auto columns = columns_of(kKernelTable);
  if (!columns) return unread(columns.error().message);
  if (!columns->contains("gridX") || !columns->contains("demangledName")) return {};
  std::string ids;
  std::unordered_set<StringId> names;
  for (const auto& [nsys_id, pool_id] : token_grid_names_) {
    ids += (ids.empty() ? "" : ", ") + std::to_string(nsys_id);
    names.insert(pool_id);
  }
  auto stmt = db_.prepare(std::string("SELECT gridX FROM ") + kKernelTable + " WHERE demangledName IN (" + ids + ") ORDER BY rowid");
  if (!stmt) return unread(stmt.error().message);
  // The kernel rows are in rowid order (the slices are joined in order): the n-th such row takes
  // the n-th grid.
  RowIndex i = 0;
  while (true) {
    auto more = stmt->step();
    if (!more) return unread(more.error().message);
    if (!*more) break;
    while (i < k.size() && !names.contains(k.demangled_name[i])) ++i;
    if (i == k.size()) break;
    if (k.token_grid.empty()) k.token_grid.assign(k.size(), 0);
    k.token_grid[i++] = static_cast<std::int32_t>(stmt->int64(0));
  }
  return {};
}

Result<void> Reader::read_enums() {
  auto read_labels = [&](const char* table, std::map<std::int32_t, std::string>& out) -> Result<bool> {
    if (!has_table(table)) return false;
    auto r = scan(table, {{"id", "0"}, {"label", "''"}}, [&](const Statement& s) {
      out[static_cast<std::int32_t>(s.int64(0))] = std::string(s.text(1));
    });
    if (!r) return std::unexpected(r.error());
    return true;
  };
  auto copy = read_labels("ENUM_CUDA_MEMCPY_OPER", trace_.memcpy_kind_labels);
  if (!copy) return std::unexpected(copy.error());
  trace_.has_memcpy_kind_labels = *copy;
  auto mem = read_labels("ENUM_CUDA_MEM_KIND", trace_.memory_kind_labels);
  if (!mem) return std::unexpected(mem.error());
  trace_.has_memory_kind_labels = *mem;
  // Older exports lack the enum tables; the values are CUPTI's own and have not changed, so the
  // labels nsys 2025.3 writes stand in for them (noted, since they are not from the file).
  if (!*copy) {
    trace_.memcpy_kind_labels = kineto_names::nsys_memcpy_kind_labels();
    if (has_table(kMemcpyTable)) note("no_memcpy_kind_labels", NoteSeverity::kInfo, "no ENUM_CUDA_MEMCPY_OPER table: memcpy directions use CUPTI's standard labels");
  }
  if (!*mem) {
    trace_.memory_kind_labels = kineto_names::nsys_memory_kind_labels();
    if (has_table(kMemcpyTable) || has_table(kMemsetTable)) note("no_memory_kind_labels", NoteSeverity::kInfo, "no ENUM_CUDA_MEM_KIND table: memory kinds use CUPTI's standard labels");
  }
  return {};
}

Result<void> Reader::read_devices() {
  if (!has_table("TARGET_INFO_GPU")) {
    trace_.has_gpu_info = false;
    note("no_gpu_info", NoteSeverity::kInfo, "no TARGET_INFO_GPU table: device names and properties are unknown");
    return {};
  }
  auto r = scan("TARGET_INFO_GPU",
                {{"id", "0"}, {"name", "''"}, {"chipName", "''"}, {"busLocation", "''"},
                 {"uuid", "''"}, {"smCount", "0"}, {"totalMemory", "0"},
                 {"memoryBandwidth", "0"}, {"clockRate", "0"}, {"l2CacheSize", "0"},
                 {"computeMajor", "0"}, {"computeMinor", "0"}},
                [&](const Statement& s) {
                  Device d;
                  d.id = s.int64(0);
                  d.name = s.text(1);
                  d.chip_name = s.text(2);
                  d.bus_location = s.text(3);
                  d.uuid = s.text(4);
                  d.sm_count = s.int64(5);
                  d.total_memory_bytes = s.int64(6);
                  d.memory_bandwidth_bytes_per_s = s.int64(7);
                  d.clock_rate_hz = s.int64(8);
                  d.l2_cache_bytes = s.int64(9);
                  d.compute_major = static_cast<std::int32_t>(s.int64(10));
                  d.compute_minor = static_cast<std::int32_t>(s.int64(11));
                  trace_.devices.push_back(std::move(d));
                });
  if (!r) return r;
  if (has_table("TARGET_INFO_CUDA_DEVICE")) {
    return scan("TARGET_INFO_CUDA_DEVICE", {{"gpuId", "0"}, {"cudaId", "0"}},
                [&](const Statement& s) {
                  for (auto& d : trace_.devices) {
                    if (d.id == s.int64(0)) d.cuda_id = s.int64(1);
                  }
                });
  }
  return {};
}

Result<void> Reader::read_processes_and_threads() {
  if (has_table("PROCESSES")) {
    auto r = scan("PROCESSES", {{"globalPid", "0"}, {"pid", "0"}, {"name", "''"}},
                  [&](const Statement& s) {
                    trace_.processes.push_back({s.int64(0), s.int64(1), std::string(s.text(2))});
                  });
    if (!r) return r;
  }
  if (!has_table("ThreadNames")) {
    trace_.has_thread_names = false;
    return {};
  }
  return scan("ThreadNames", {{"globalTid", "0"}, {"nameId", nullptr}, {"priority", "0"}},
              [&](const Statement& s) {
                trace_.threads.push_back({s.int64(0), std::string(trace_.strings.get(str(s, 1))),
                                          static_cast<std::int32_t>(s.int64(2))});
              });
}

Result<void> Reader::read_kernels(const Database& db, KernelColumns& k, const RowRange& range) {
  // Summaries need only the first columns; launch geometry, green contexts and streams are read
  // only when asked for (Trace::detailed says so); short and mangled names are left out where the
  // plan says no one reads them (OpenOptions::kernel_name_variants).
  return read_named_columns(db, kKernelTable, k, range, (options_.detail_kinds & bit(EventKind::kKernels)) != 0,
                            options_.kernel_name_variants);
}

Result<void> Reader::read_memcpys(const Database& db, MemcpyColumns& m, const RowRange& range) {
  return read_named_columns(db, kMemcpyTable, m, range);
}

Result<void> Reader::read_memsets(const Database& db, MemsetColumns& m, const RowRange& range) {
  return read_named_columns(db, kMemsetTable, m, range);
}

Result<void> Reader::read_api_calls(const Database& db, ApiCallColumns& a, const RowRange& range) {
  // Return values and event classes are read only when asked for (cuda_api_trace).
  return read_named_columns(db, kRuntimeTable, a, range, (options_.detail_kinds & bit(EventKind::kApiCalls)) != 0);
}

Result<void> Reader::read_syncs(const Database& db, SyncColumns& y, const RowRange& range) {
  return read_named_columns(db, kSyncTable, y, range);
}

Result<void> Reader::read_nvtx(const Database& db, NvtxColumns& n, const RowRange& range) {
  return scan(db, kNvtxTable, range,
              {{"start", "0"}, {"end", nullptr}, {"globalTid", "0"}, {"endGlobalTid", "0"},
               {"eventType", "0"}, {"domainId", "0"}, {"text", nullptr}, {"textId", nullptr},
               {"category", "0"}, {"color", "0"}, {"uint64Value", nullptr},
               {"int64Value", nullptr}, {"doubleValue", nullptr}, {"uint32Value", nullptr},
               {"int32Value", nullptr}, {"floatValue", nullptr}},
              [&](const Statement& s) {
                n.start_ns.push_back(s.int64(0));
                n.end_ns.push_back(s.is_null(1) ? kNoTime : s.int64(1));
                n.global_tid.push_back(s.int64(2));
                n.end_global_tid.push_back(s.int64(3));
                n.event_type.push_back(static_cast<std::int32_t>(s.int64(4)));
                n.domain_id.push_back(s.int64(5));
                // nsys resolves a registered string (textId) before the inline text.
                StringId text = str(s, 7);
                if (text == kNoString && !s.is_null(6)) text = trace_.strings.intern(s.text(6));
                n.text.push_back(text);
                n.category.push_back(static_cast<std::int32_t>(s.int64(8)));
                n.color.push_back(static_cast<std::uint32_t>(s.int64(9)));
                PayloadKind kind = PayloadKind::kNone;
                std::int64_t as_int = 0;
                double as_double = 0;
                constexpr PayloadKind kKinds[] = {PayloadKind::kUint64, PayloadKind::kInt64,
                                                  PayloadKind::kDouble, PayloadKind::kUint32,
                                                  PayloadKind::kInt32, PayloadKind::kFloat};
                for (int i = 0; i < 6; ++i) {
                  if (s.is_null(10 + i)) continue;
                  kind = kKinds[i];
                  if (kind == PayloadKind::kDouble || kind == PayloadKind::kFloat) {
                    as_double = s.real(10 + i);
                  } else {
                    as_int = s.int64(10 + i);
                  }
                  break;
                }
                n.payload_kind.push_back(kind);
                n.payload_int.push_back(as_int);
                n.payload_double.push_back(as_double);
              });
}

Result<void> Reader::read_graph_execs(const Database& db, GraphExecColumns& g, const RowRange& range) {
  return read_named_columns(db, kGraphTraceTable, g, range);
}

Result<void> Reader::read_samples(const Database& db, GpuSampleColumns& g, const RowRange& range) {
  return read_named_columns(db, kSamplesTable, g, range);
}

// The tracer samples by NVML index, which need not be CUDA's device number (CUDA_VISIBLE_DEVICES,
// PCI order): samples are renumbered to the device whose UUID NVML gave for that index.
void Reader::map_samples_to_cuda_devices() {
  if (nvml_uuids_.empty()) return;
  auto bare = [](std::string_view uuid) {
    if (uuid.starts_with("GPU-")) uuid.remove_prefix(4);
    std::string out;
    for (char c : uuid) {
      if (c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
  };
  std::map<std::uint32_t, std::uint32_t> cuda_of;
  for (const auto& [index, uuid] : nvml_uuids_) {
    for (const auto& d : trace_.devices) {
      if (!d.uuid.empty() && bare(d.uuid) == bare(uuid)) cuda_of[index] = static_cast<std::uint32_t>(d.id);
    }
  }
  for (auto& id : trace_.gpu_samples.device_id) {
    if (auto it = cuda_of.find(id); it != cuda_of.end()) id = it->second;
  }
}

// The tracer's own counts: records CUPTI dropped are said beside every report. The tracer writes
// these rows when it finishes the file; a file without them was cut short.
Result<void> Reader::read_tracer_info() {
  if (!has_table(kTracerInfoTable)) return {};
  auto stmt = db_.prepare(std::string("SELECT name, value FROM ") + kTracerInfoTable);
  if (!stmt) return std::unexpected(stmt.error());
  trace_.source.format = "kernscope-tracer";
  bool finished = false;
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    const std::string name(stmt->text(0));
    const std::string value(stmt->text(1));
    trace_.source.tracer_info.emplace_back(name, value);
    if (name == "dropped_records" && value != "0") {
      note("tracer_dropped_records", NoteSeverity::kDataLoss, value + " records dropped by kernscope's tracer (its CUPTI buffers were full): totals are low", count_of(value));
    } else if (name == "cupti_taken_over") {
      note("cupti_taken_over", NoteSeverity::kDataLoss, "another profiler in the traced program took over CUPTI (" + value + " buffers of records went to it): the trace is incomplete", count_of(value));
    } else if (name == "nvml") {
      note("gpu_samples", NoteSeverity::kInfo, "GPU samples: " + value);
    } else if (name.starts_with("nvml_uuid_")) {
      try {
        nvml_uuids_[static_cast<std::uint32_t>(std::stoul(name.substr(10)))] = value;
      } catch (const std::exception&) {
      }  // a malformed index: that device's samples keep NVML's numbering
    } else if (name == "tracer") {
      finished = true;
      trace_.source.product_version = value;
    }
  }
  // The tracer's time on each thread (written before the info rows, by tracers that measure their own cost).
  if (has_table(kTracerCostTable)) {
    auto cost = db_.prepare(std::string("SELECT globalTid, site, calls, totalNs, programThread FROM ") + kTracerCostTable);
    if (!cost) return std::unexpected(cost.error());
    while (true) {
      auto more = cost->step();
      if (!more) return std::unexpected(more.error());
      if (!*more) break;
      trace_.tracer_cost.push_back(
          {cost->int64(0), std::string(cost->text(1)), cost->int64(2), cost->int64(3), cost->int64(4) != 0});
    }
  }
  // Whether the launching threads ran on a CPU between their calls (tracers that read the threads' CPU clocks).
  if (has_table(kThreadCpuTable)) {
    auto cpu = db_.prepare(std::string("SELECT globalTid, start, end, cpuNs, busy FROM ") + kThreadCpuTable + " ORDER BY globalTid, start");
    if (!cpu) return std::unexpected(cpu.error());
    auto& t = trace_.thread_cpu;
    while (true) {
      auto more = cpu->step();
      if (!more) return std::unexpected(more.error());
      if (!*more) break;
      if (cpu->int64(2) <= cpu->int64(1)) continue;  // an empty stretch says nothing
      t.global_tid.push_back(cpu->int64(0));
      t.start_ns.push_back(cpu->int64(1));
      t.end_ns.push_back(cpu->int64(2));
      t.cpu_ns.push_back(cpu->int64(3));
      t.busy.push_back(cpu->int64(4) != 0 ? 1 : 0);
    }
  }
  if (auto windows = read_capture_windows(); !windows) return windows;
  if (!finished) {
    note("cut_short", NoteSeverity::kDataLoss, "the trace was cut short (its program was killed or crashed before kernscope's tracer finished the "
         "file, or is still running): it holds the batches committed so far, without the tracer's totals, "
         "process or thread names");
  }
  return {};
}

// The windows a live capture recorded, and what that means for every total: said once, here.
Result<void> Reader::read_capture_windows() {
  if (!has_table(kCaptureWindowsTable)) return {};
  auto stmt = db_.prepare(std::string("SELECT start, end, openedBy, closedBy FROM ") + kCaptureWindowsTable + " ORDER BY start");
  if (!stmt) return std::unexpected(stmt.error());
  TimeNs recorded = 0;
  int cut = 0;
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    CaptureWindow w;
    w.start = stmt->int64(0);
    if (!stmt->is_null(1)) w.end = stmt->int64(1);
    w.opened_by = stmt->is_null(2) ? "" : std::string(stmt->text(2));
    w.closed_by = stmt->is_null(3) ? "" : std::string(stmt->text(3));
    if (w.end && *w.end > w.start) recorded += *w.end - w.start;
    cut += !w.end;
    trace_.capture_windows.push_back(std::move(w));
  }
  const std::string how = trace_.source.tracer_info_value("capture");
  const std::string run_start = trace_.source.tracer_info_value("run_start_ns");
  const std::string run_end = trace_.source.tracer_info_value("run_end_ns");
  std::string span;
  try {
    if (!run_start.empty() && !run_end.empty()) {
      char text[96];
      std::snprintf(text, sizeof text, " of a %.3f s run", static_cast<double>(std::stoll(run_end) - std::stoll(run_start)) / 1e9);
      span = text;
    }
  } catch (const std::exception&) {
  }  // malformed figures: the note goes without the run's length
  char recorded_text[32];
  std::snprintf(recorded_text, sizeof recorded_text, "%.3f s", static_cast<double>(recorded) / 1e9);
  if (trace_.capture_windows.empty()) {
    if (!how.empty() && how.rfind("tail", 0) == 0) note("no_capture_window", NoteSeverity::kInfo, "tail capture wrote no window: no step was slow enough (" + how + ")");
    else if (!how.empty() && how != "whole run") note("no_capture_window", NoteSeverity::kInfo, "nothing was recorded: no capture window was opened (" + how + ")");
    return {};
  }
  note("capture_windows", NoteSeverity::kInfo, "recorded in " + std::to_string(trace_.capture_windows.size()) + " capture window(s)" + (how.empty() ? "" : " (" + how + ")") +
       ", " + recorded_text + span + ": totals and shares are the windows', not the whole run's; steps cut by a window's edge are left out");
  if (cut > 0) note("capture_window_cut_short", NoteSeverity::kDataLoss, std::to_string(cut) + " capture window(s) were still open when the program ended or was killed: cut short", cut);
  return {};
}

Result<void> Reader::read_overhead(const Database& db, OverheadColumns& o, const RowRange& range) {
  return read_named_columns(db, kOverheadTable, o, range);
}

Result<void> Reader::read_osrt(const Database& db, OsrtColumns& o, const RowRange& range) {
  return read_named_columns(db, kOsrtTable, o, range);
}

std::vector<RowRange> Reader::plan_ranges(const std::string& table, bool parallel) {
  const std::size_t rows_per_slice = options_.rows_per_slice;
  RowRange whole;
  // min/max(rowid) are B-tree seeks, unlike count(*), which walks every page. nsys writes rowids
  // densely; the database size bounds the estimate in case a file does not (a row takes at least
  // a few bytes), so a sparse table cannot make the reader reserve absurd amounts.
  // Two statements: SQLite answers a lone min() or max() of rowid from the B-tree's edge, but
  // "SELECT min(rowid), max(rowid)" scans the whole table.
  auto edge = [&](const char* fn) -> std::optional<std::int64_t> {
    auto stmt = db_.prepare(std::string("SELECT ") + fn + "(rowid) FROM \"" + table + "\"");
    if (!stmt) return std::nullopt;
    auto row = stmt->step();
    if (!row || !*row || stmt->is_null(0)) return std::nullopt;
    return stmt->int64(0);
  };
  const auto first = edge("min"), last = edge("max");
  if (!first || !last) return {whole};
  const std::int64_t lo = *first, hi = *last;
  const std::int64_t span = hi - lo + 1;
  if (span <= 0) return {whole};
  const std::size_t estimate = std::min<std::size_t>(static_cast<std::size_t>(span), database_bytes_ / 4 + 1);
  whole.expected_rows = estimate;
  if (!parallel || rows_per_slice == 0 || estimate < 2 * rows_per_slice) return {whole};
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t slices = std::min<std::size_t>({estimate / rows_per_slice, cores, 32});
  if (slices < 2) return {whole};
  std::vector<RowRange> ranges;
  for (std::size_t i = 0; i < slices; ++i) {
    RowRange r;
    r.whole = false;
    // span * i / slices without overflow: split span into quotient and remainder by slices.
    const auto n = static_cast<std::int64_t>(slices);
    auto offset = [&](std::int64_t k) { return span / n * k + span % n * k / n; };
    r.first = lo + offset(static_cast<std::int64_t>(i));
    r.last = lo + offset(static_cast<std::int64_t>(i) + 1) - 1;
    r.expected_rows = estimate / slices + 1;
    ranges.push_back(r);
  }
  return ranges;
}

template <class Columns>
void Reader::schedule(const std::string& table, Columns& target, bool parallel,
                      Result<void> (Reader::*read)(const Database&, Columns&, const RowRange&),
                      std::vector<std::function<Result<void>(const Database&)>>& tasks,
                      std::vector<std::function<void()>>& merges) {
  const auto ranges = plan_ranges(table, parallel);
  auto parts = std::make_shared<std::vector<Columns>>(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    tasks.push_back([this, parts, i, range = ranges[i], read](const Database& db) {
      return (this->*read)(db, (*parts)[i], range);
    });
  }
  merges.push_back([parts, &target] {
    std::size_t total = 0;
    for (const auto& part : *parts) total += part.size();
    target = std::move((*parts)[0]);
    // Only the columns the plan filled (the others stay empty, and unreserved).
    Columns::visit(target, [total](auto& column) {
      if (!column.empty()) column.reserve(total);
    });
    // Free each slice's columns once copied, so the peak stays near one copy of the rows.
    for (std::size_t i = 1; i < parts->size(); ++i) move_append_rows(target, (*parts)[i]);
  });
}

Result<Trace> Reader::run(const OpenOptions& options) {
  meter_ = std::make_unique<progress::Meter>("reading " + label_, "rows");
  auto tables = db_.tables();
  if (!tables) {
    return make_error(ErrorCode::kBadInput,
                      label_ + ": not a readable SQLite database, truncated or corrupted (" +
                          tables.error().message + ")");
  }
  tables_ = std::move(*tables);
  if (auto pages = db_.prepare("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")) {
    if (auto row = pages->step(); row && *row) database_bytes_ = static_cast<std::size_t>(std::max<std::int64_t>(0, pages->int64(0)));
  }
  const bool has_meta = has_table("META_DATA_EXPORT") || has_table("EXPORT_META_DATA");
  const bool has_cupti = has_table(kKernelTable) || has_table(kRuntimeTable) ||
                         has_table(kMemcpyTable) || has_table(kNvtxTable);
  // Old exports (2021) have no metadata table; with no event table either, nsys's own enum and
  // target tables still say what the file is: an export in which nothing was traced.
  const bool has_nsys_tables = has_table("StringIds") &&
                               std::any_of(tables_.begin(), tables_.end(), [](const std::string& t) {
                                 return t.starts_with("ENUM_") || t.starts_with("TARGET_INFO_") || t == "ThreadNames";
                               });
  if (!has_meta && !(has_table("StringIds") && has_cupti) && !has_nsys_tables) {
    return make_error(ErrorCode::kBadInput,
                      label_ + ": SQLite file is not an Nsight Systems export (no META_DATA_EXPORT "
                               "or StringIds table)");
  }
  if (!has_cupti && !has_table(kOsrtTable) && !has_table(kSamplesTable) && !has_table(kGraphTraceTable)) {
    note("nothing_traced", NoteSeverity::kInfo, "the export holds Nsight Systems tables but no event tables: nothing was traced");
  }

  struct KindTable {
    EventKind kind;
    const char* table;
  };
  const KindTable kinds[] = {
      {EventKind::kKernels, kKernelTable}, {EventKind::kMemcpy, kMemcpyTable},
      {EventKind::kMemset, kMemsetTable},  {EventKind::kApiCalls, kRuntimeTable},
      {EventKind::kSyncs, kSyncTable},     {EventKind::kNvtx, kNvtxTable},
      {EventKind::kOsrt, kOsrtTable},      {EventKind::kOverhead, kOverheadTable},
      {EventKind::kGpuSamples, kSamplesTable}, {EventKind::kGraphExecs, kGraphTraceTable},
  };
  for (const auto& k : kinds) {
    if (has_table(k.table)) trace_.present |= bit(k.kind);
  }

  for (auto step : {&Reader::check_columns, &Reader::read_meta, &Reader::read_strings,
                    &Reader::read_enums, &Reader::read_devices, &Reader::read_processes_and_threads,
                    &Reader::read_tracer_info}) {
    auto r = (this->*step)();
    if (!r) return std::unexpected(r.error());
  }
  // Event tables are scanned in parallel, large ones in rowid slices, each task on a connection
  // of its own, when the export is a file (an in-memory image has one connection). Tasks share
  // only read-only state (the string map, the column cache) and write to their own columns; the
  // slices are then concatenated in rowid order, so the result equals one sequential scan. NVTX
  // interns inline text into the pool, so it is read alone afterwards.
  const bool parallel = file_path_ != nullptr;
  auto wanted = [&](EventKind kind, const char* table) {
    return has_table(table) && (options.kinds & bit(kind));
  };
  std::vector<std::function<Result<void>(const Database&)>> tasks;
  std::vector<std::function<void()>> merges;
  if (wanted(EventKind::kKernels, kKernelTable)) schedule(kKernelTable, trace_.kernels, parallel, &Reader::read_kernels, tasks, merges);
  if (wanted(EventKind::kApiCalls, kRuntimeTable)) schedule(kRuntimeTable, trace_.api_calls, parallel, &Reader::read_api_calls, tasks, merges);
  if (wanted(EventKind::kMemcpy, kMemcpyTable)) schedule(kMemcpyTable, trace_.memcpys, parallel, &Reader::read_memcpys, tasks, merges);
  if (wanted(EventKind::kMemset, kMemsetTable)) schedule(kMemsetTable, trace_.memsets, parallel, &Reader::read_memsets, tasks, merges);
  if (wanted(EventKind::kSyncs, kSyncTable)) schedule(kSyncTable, trace_.syncs, parallel, &Reader::read_syncs, tasks, merges);
  if (wanted(EventKind::kOsrt, kOsrtTable)) schedule(kOsrtTable, trace_.osrt, parallel, &Reader::read_osrt, tasks, merges);
  if (wanted(EventKind::kOverhead, kOverheadTable)) schedule(kOverheadTable, trace_.overhead, parallel, &Reader::read_overhead, tasks, merges);
  if (wanted(EventKind::kGraphExecs, kGraphTraceTable)) schedule(kGraphTraceTable, trace_.graph_execs, parallel, &Reader::read_graph_execs, tasks, merges);
  if (wanted(EventKind::kGpuSamples, kSamplesTable)) schedule(kSamplesTable, trace_.gpu_samples, parallel, &Reader::read_samples, tasks, merges);

  std::vector<Result<void>> results(tasks.size());
  const std::size_t workers = parallel ? std::min<std::size_t>(tasks.size(), std::max(1u, std::min(16u, std::thread::hardware_concurrency()))) : 1;
  if (workers > 1) {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        auto db = Database::open_file(*file_path_);
        // A slice is read once, front to back: a page cache only costs memory (16 workers x the
        // default 2 MB would exceed a small export's own size).
        if (db) {
          if (auto pragma = db->prepare("PRAGMA cache_size=-64")) (void)pragma->step();
        }
        for (std::size_t i = next++; i < tasks.size(); i = next++) {
          results[i] = db ? tasks[i](*db) : Result<void>(std::unexpected(db.error()));
        }
      });
    }
    for (auto& t : threads) t.join();
  } else {
    for (std::size_t i = 0; i < tasks.size(); ++i) results[i] = tasks[i](db_);
  }
  for (auto& r : results) {
    if (!r) return std::unexpected(r.error());
  }
  // NVTX and the sampled host stacks intern their text into the string pool, so they are read on
  // the main connection after the slices. They touch nothing the slices' merges touch (the event
  // tables' columns): they are read on a thread of their own while the merges run on this one
  // (0.13 s of copying on a 300 MB export, on one core). Their notes are set apart meanwhile and
  // put back after the kernels' own, in the order a read one after the other made them.
  const bool nvtx_wanted = wanted(EventKind::kNvtx, kNvtxTable);
  // Sampled host stacks come with the NVTX kind when its detail is asked (host, report, steps,
  // info): not for stats or tail, which never use them and would pay for reading them.
  const bool host_wanted = (options.kinds & bit(EventKind::kNvtx)) && (options.detail_kinds & bit(EventKind::kNvtx));
  const std::size_t notes_before = trace_.notes.size();
  auto pooled = std::async(std::launch::async, [&]() -> Result<void> {
    if (nvtx_wanted) {
      if (auto r = read_nvtx(db_, trace_.nvtx, plan_ranges(kNvtxTable, false).front()); !r) return r;
    }
    if (!host_wanted) return {};
    const auto string_of = [this](std::int64_t nsys_id) { return strings_.lookup(nsys_id); };
    return read_host_tables(db_, tables_, string_of, trace_);
  });
  for (auto& merge : merges) merge();
  if (auto r = pooled.get(); !r) return std::unexpected(r.error());
  std::vector<Note> pooled_notes(std::make_move_iterator(trace_.notes.begin() + static_cast<std::ptrdiff_t>(notes_before)),
                                 std::make_move_iterator(trace_.notes.end()));
  trace_.notes.resize(notes_before);
  if (wanted(EventKind::kKernels, kKernelTable)) {
    if (auto r = read_token_grids(); !r) return std::unexpected(r.error());
  }
  trace_.notes.insert(trace_.notes.end(), std::make_move_iterator(pooled_notes.begin()), std::make_move_iterator(pooled_notes.end()));
  map_samples_to_cuda_devices();
  for (const auto& k : kinds) {
    if (k.kind != EventKind::kNvtx && wanted(k.kind, k.table)) trace_.loaded |= bit(k.kind);
  }
  // Memory operations, syncs, NVTX and OSRT are always read whole.
  trace_.detailed = trace_.loaded & ~((bit(EventKind::kKernels) | bit(EventKind::kApiCalls)) & ~options.detail_kinds);
  if (nvtx_wanted) {
    trace_.loaded |= bit(EventKind::kNvtx);
    trace_.detailed |= bit(EventKind::kNvtx);
  }
  // When the launching threads were on a CPU, wherever steps can be found (API calls and ranges
  // loaded): step windows must not depend on the command.
  if (options.thread_cpu && wanted(EventKind::kApiCalls, kRuntimeTable) && (options.kinds & bit(EventKind::kNvtx))) {
    if (auto r = read_scheduling_events(db_, tables_, trace_); !r) return std::unexpected(r.error());
  }

  if (!trace_.has(EventKind::kNvtx)) note("no_nvtx_table", NoteSeverity::kInfo, "no NVTX data (NVTX_EVENTS absent): NVTX reports and filters are unavailable");
  if (!trace_.has(EventKind::kKernels)) note("no_kernel_table", NoteSeverity::kInfo, "no CUDA kernel data (CUPTI_ACTIVITY_KIND_KERNEL absent)");
  if (!trace_.has(EventKind::kApiCalls)) note("no_api_table", NoteSeverity::kInfo, "no CUDA API data (CUPTI_ACTIVITY_KIND_RUNTIME absent)");
  if (!trace_.has(EventKind::kOsrt)) note("no_osrt_table", NoteSeverity::kInfo, "no OS runtime data (OSRT_API absent)");
  return std::move(trace_);
}

}  // namespace

bool sniff_sqlite(const unsigned char* head, std::size_t size) {
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  return size >= 16 && std::memcmp(head, kMagic, 16) == 0;
}

Result<Trace> read_export(const Database& db, const std::string& label, const OpenOptions& options,
                          const std::string* file_path) {
  Reader reader(db, label, options, file_path);
  return reader.run(options);
}

}  // namespace kernscope::nsys
