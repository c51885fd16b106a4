#include "tracer/trace_db_writer.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <map>
#include <set>

#include "tracer/sqlite_statement.hpp"

namespace kernscope::tracer {
namespace {

std::int64_t global_pid(std::uint32_t pid) { return static_cast<std::int64_t>(pid) << 24; }
std::int64_t global_tid(std::uint32_t pid, std::uint32_t tid) {
  return global_pid(pid) | (static_cast<std::int64_t>(tid) & 0xFFFFFF);
}

}  // namespace

struct TraceDbWriter::Impl {
  sqlite3* db = nullptr;
  std::string path;
  std::uint32_t pid = 0;
  std::size_t strings_written = 0;
  std::set<std::uint32_t> devices_written;
  // Domain names -> NVTX domain ids (1, 2, ...; 0 is the default domain), created on first use.
  std::map<StringId, std::int64_t> domain_ids;
  std::int64_t range_id = 0;

  ~Impl() {
    if (db) sqlite3_close(db);
  }
  Result<void> exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      std::string why = message ? message : "unknown error";
      sqlite3_free(message);
      return make_error(ErrorCode::kIo, path + ": " + why);
    }
    return {};
  }
  // Runs a PRAGMA that answers with one value (journal_mode answers with the mode now in use).
  Result<std::string> pragma(const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) return fail(sql);
    const int rc = sqlite3_step(stmt);
    std::string value;
    if (rc == SQLITE_ROW) {
      if (const auto* text = sqlite3_column_text(stmt, 0)) value = reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return fail(sql);
    return value;
  }
  std::unexpected<Error> fail(const char* what) {
    return make_error(ErrorCode::kIo, path + ": " + what + ": " + sqlite3_errmsg(db));
  }
};

TraceDbWriter::TraceDbWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceDbWriter::~TraceDbWriter() = default;

Result<std::unique_ptr<TraceDbWriter>> TraceDbWriter::create(const std::string& path, std::uint32_t pid) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->pid = pid;
  // A -wal or -journal left beside an earlier file of this name (a traced run that was killed)
  // belongs to that file: SQLite, or a reader copying the sidecars, would apply it to this one.
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  if (sqlite3_open_v2(path.c_str(), &impl->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    return make_error(ErrorCode::kIo, path + ": cannot create the trace file: " +
                                          (impl->db ? sqlite3_errmsg(impl->db) : "out of memory"));
  }
  // Journaling: write-ahead log. Each batch's transaction appends its pages to `path`-wal and ends
  // with a commit frame; pages spilled from the cache in the middle of a large batch go there too,
  // never into the file. Whatever kills the program (SIGKILL, a crash, in the middle of a batch,
  // of a commit or of a checkpoint), the file plus its -wal hold exactly the committed batches,
  // and the file alone holds those of the last checkpoint. With the rollback journal the spilled
  // pages overwrite the file itself and only the -journal can undo them: a file copied or read
  // without it (kernscope used to open it immutable) shows half a batch or a corrupt b-tree. WAL
  // also lets a reader (sqlite3 on a live trace) read without making a commit fail as busy. Its
  // cost, measured with the kernel INSERT on a 2-core VM (2025-11-23, CPU time per row, median of
  // 5): the same as the rollback journal for 2,000-row batches (1.9 us), half for 20-row batches
  // (4.2 against 8.9 us: no journal file created and deleted per commit), 2.6 against 2.1 us for
  // 60,000-row batches (spilled pages and checkpoints written twice), within the runs' spread.
  // finish() folds the log back in, so a finished trace is one self-contained file.
  // Where WAL cannot be used (a file system without shared memory), SQLite keeps the rollback
  // journal, and kernscope's reader still honours a hot one.
  if (auto r = impl->pragma("PRAGMA journal_mode=WAL"); !r) return std::unexpected(r.error());
  // No fsync: the traced program's speed matters more than durability against power loss or an
  // OS crash (then pages written but not yet on disk can be lost or reordered, and the last
  // batches, or the file, with them). Against the program's own death it costs nothing: every
  // write() already returned is in the kernel's page cache, which outlives the process.
  if (auto r = impl->exec("PRAGMA synchronous=OFF"); !r) return std::unexpected(r.error());
  // The schema in one transaction: a program killed here leaves no half-made tables. Copied into
  // the file at once, so that even the file alone (copied without its -wal) is a trace, if empty.
  if (auto r = impl->exec("BEGIN"); !r) return std::unexpected(r.error());
  if (auto r = impl->exec(nsys_schema_sql()); !r) return std::unexpected(r.error());
  if (auto r = impl->exec("COMMIT"); !r) return std::unexpected(r.error());
  if (auto r = impl->exec("PRAGMA wal_checkpoint(TRUNCATE)"); !r) return std::unexpected(r.error());
  return std::unique_ptr<TraceDbWriter>(new TraceDbWriter(std::move(impl)));
}

Result<void> TraceDbWriter::append(const RecordBatch& b, const StringPool& strings) {
  Impl& w = *impl_;
  if (auto r = w.exec("BEGIN"); !r) return r;
  {
    Statement s(w.db, "INSERT INTO StringIds (id, value) VALUES (?, ?)");
    for (; w.strings_written < strings.size(); ++w.strings_written) {
      s.i64(1, static_cast<std::int64_t>(w.strings_written)).text(2, std::string(strings.get(static_cast<StringId>(w.strings_written))));
      if (!s.step()) return w.fail("writing strings");
    }
  }
  const std::int64_t gpid = global_pid(w.pid);
  if (!b.kernels.empty()) {
    Statement s(w.db,
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, demangledName, shortName, mangledName, launchType, registersPerThread, gridX, gridY, gridZ, "
                "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                "localMemoryTotal, gridId, graphNodeId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?,?)");
    for (const auto& k : b.kernels) {
      s.i64(1, k.start).i64(2, k.end).i64(3, k.device).i64(4, k.context).i64(5, k.stream).i64(6, k.correlation);
      s.i64(7, gpid).i64(8, k.demangled).i64(9, k.short_name).i64(10, k.mangled).i64(11, k.launch_type).i64(12, k.registers);
      s.i64(13, k.grid[0]).i64(14, k.grid[1]).i64(15, k.grid[2]).i64(16, k.block[0]).i64(17, k.block[1]).i64(18, k.block[2]);
      s.i64(19, k.static_smem).i64(20, k.dynamic_smem).i64(21, k.local_memory_total).i64(22, k.grid_id);
      if (k.graph_node_id) s.i64(23, static_cast<std::int64_t>(k.graph_node_id));
      else s.null(23);
      if (!s.step()) return w.fail("writing kernels");
    }
  }
  if (!b.memcpys.empty()) {
    Statement s(w.db,
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, bytes, copyKind, srcKind, dstKind, graphNodeId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& m : b.memcpys) {
      s.i64(1, m.start).i64(2, m.end).i64(3, m.device).i64(4, m.context).i64(5, m.stream).i64(6, m.correlation);
      s.i64(7, gpid).i64(8, m.bytes).i64(9, m.copy_kind).i64(10, m.src_kind).i64(11, m.dst_kind);
      if (m.graph_node_id) s.i64(12, static_cast<std::int64_t>(m.graph_node_id));
      else s.null(12);
      if (!s.step()) return w.fail("writing memory copies");
    }
  }
  if (!b.memsets.empty()) {
    Statement s(w.db,
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, value, bytes, graphNodeId, memKind) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& m : b.memsets) {
      s.i64(1, m.start).i64(2, m.end).i64(3, m.device).i64(4, m.context).i64(5, m.stream).i64(6, m.correlation);
      s.i64(7, gpid).i64(8, m.value).i64(9, m.bytes);
      if (m.graph_node_id) s.i64(10, static_cast<std::int64_t>(m.graph_node_id));
      else s.null(10);
      s.i64(11, m.mem_kind);
      if (!s.step()) return w.fail("writing memsets");
    }
  }
  if (!b.graph_traces.empty()) {
    // CUPTI's graphId is the executable graph's: nsys writes the same number as graphExecId (checked
    // on an H100 against nsys --cuda-graph-trace=graph). The graph it was instantiated from, nsys's
    // graphId, is not in CUPTI's record, so that column repeats the executable graph's id.
    Statement s(w.db,
                "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, graphId, graphExecId) VALUES (?,?,?,?,?,?,?,?,?)");
    for (const auto& g : b.graph_traces) {
      s.i64(1, g.start).i64(2, g.end).i64(3, g.device).i64(4, g.context).i64(5, g.stream).i64(6, g.correlation);
      s.i64(7, gpid).i64(8, g.graph_id).i64(9, g.graph_id);
      if (!s.step()) return w.fail("writing graph executions");
    }
  }
  if (!b.api_calls.empty()) {
    Statement s(w.db,
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                "returnValue) VALUES (?,?,?,?,?,?,?)");
    for (const auto& a : b.api_calls) {
      s.i64(1, a.start).i64(2, a.end).i64(3, a.driver ? 1 : 0).i64(4, global_tid(a.pid, a.tid));
      s.i64(5, a.correlation).i64(6, a.name).i64(7, a.return_value);
      if (!s.step()) return w.fail("writing API calls");
    }
  }
  if (!b.syncs.empty()) {
    Statement s(w.db,
                "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
                "correlationId, globalPid, syncType, eventId) VALUES (?,?,0,?,?,?,?,?,?)");
    for (const auto& y : b.syncs) {
      s.i64(1, y.start).i64(2, y.end).i64(3, y.context).i64(4, y.stream == UINT32_MAX ? -1 : y.stream);
      s.i64(5, y.correlation).i64(6, gpid).i64(7, y.type).i64(8, y.event_id == UINT32_MAX ? -1 : y.event_id);
      if (!s.step()) return w.fail("writing synchronizations");
    }
  }
  if (!b.nvtx.empty()) {
    Statement domain(w.db,
                     "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?, 75, ?, ?, ?)");
    Statement s(w.db,
                "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, text, globalTid, endGlobalTid, domainId) "
                "VALUES (?,?,?,?,?,?,?,?)");
    for (const auto& n : b.nvtx) {
      std::int64_t domain_id = 0;
      if (n.domain != kNoString) {
        auto [it, inserted] = w.domain_ids.emplace(n.domain, static_cast<std::int64_t>(w.domain_ids.size()) + 1);
        domain_id = it->second;
        if (inserted) {
          domain.i64(1, n.start).text(2, std::string(strings.get(n.domain))).i64(3, global_tid(n.pid, n.tid)).i64(4, domain_id);
          if (!domain.step()) return w.fail("writing NVTX domains");
        }
      }
      s.i64(1, n.start);
      if (n.end >= 0) s.i64(2, n.end);
      else s.null(2);
      s.i64(3, n.event_type).i64(4, ++w.range_id).text(5, std::string(strings.get(n.text))).i64(6, global_tid(n.pid, n.tid));
      if (n.end >= 0 && n.end_tid != n.tid) s.i64(7, global_tid(n.pid, n.end_tid));
      else s.null(7);
      s.i64(8, domain_id);
      if (!s.step()) return w.fail("writing NVTX events");
    }
  }
  if (!b.overheads.empty()) {
    Statement s(w.db, "INSERT INTO PROFILER_OVERHEAD (start, end, globalTid, nameId, returnValue) VALUES (?,?,?,?,0)");
    for (const auto& o : b.overheads) {
      s.i64(1, o.start).i64(2, o.end).i64(3, global_tid(o.pid ? o.pid : w.pid, o.tid)).i64(4, o.name);
      if (!s.step()) return w.fail("writing overhead records");
    }
  }
  if (!b.devices.empty()) {
    Statement s(w.db,
                "INSERT INTO TARGET_INFO_GPU (vmId, id, name, uuid, totalMemory, memoryBandwidth, clockRate, "
                "l2CacheSize, smCount, threadsPerWarp, computeMajor, computeMinor, cuDevice) "
                "VALUES (0,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& d : b.devices) {
      if (!w.devices_written.insert(d.id).second) continue;
      s.i64(1, d.id).text(2, d.name).text(3, d.uuid).i64(4, d.global_memory_bytes).i64(5, d.memory_bandwidth);
      s.i64(6, d.clock_rate_khz * 1000).i64(7, d.l2_cache_bytes).i64(8, d.sm_count).i64(9, d.threads_per_warp);
      s.i64(10, d.compute_major).i64(11, d.compute_minor).i64(12, d.id);
      if (!s.step()) return w.fail("writing devices");
    }
  }
  if (!b.samples.empty()) {
    Statement s(w.db,
                "INSERT INTO KERNSCOPE_GPU_SAMPLES (timestamp, deviceId, smClockMHz, memClockMHz, powerMilliwatts, "
                "temperatureC, gpuUtilPercent, memUtilPercent, memUsedBytes, clockEventReasons, pcieTxKBps, pcieRxKBps) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& g : b.samples) {
      s.i64(1, g.timestamp).i64(2, g.device).i64(3, g.sm_clock_mhz).i64(4, g.mem_clock_mhz).i64(5, g.power_mw);
      s.i64(6, g.temperature_c).i64(7, g.gpu_util).i64(8, g.mem_util).i64(9, g.mem_used_bytes);
      s.i64(10, static_cast<std::int64_t>(g.clock_event_reasons)).i64(11, g.pcie_tx_kbps).i64(12, g.pcie_rx_kbps);
      if (!s.step()) return w.fail("writing GPU samples");
    }
  }
  if (!b.thread_cpu.empty()) {
    Statement s(w.db, "INSERT INTO KERNSCOPE_THREAD_CPU (globalTid, start, end, cpuNs, busy) VALUES (?,?,?,?,?)");
    for (const auto& t : b.thread_cpu) {
      s.i64(1, global_tid(w.pid, t.tid)).i64(2, t.start).i64(3, t.end).i64(4, t.cpu_ns).i64(5, t.busy);
      if (!s.step()) return w.fail("writing thread CPU stretches");
    }
  }
  if (!b.windows.empty()) {
    Statement s(w.db, "INSERT OR REPLACE INTO KERNSCOPE_CAPTURE_WINDOWS (id, start, end, openedBy, closedBy) VALUES (?,?,?,?,?)");
    for (const auto& win : b.windows) {
      s.i64(1, win.id).i64(2, win.start);
      if (win.end < 0) s.null(3);
      else s.i64(3, win.end);
      s.text(4, win.opened_by);
      if (win.closed_by.empty()) s.null(5);
      else s.text(5, win.closed_by);
      if (!s.step()) return w.fail("writing capture windows");
    }
  }
  return w.exec("COMMIT");
}

Result<void> TraceDbWriter::write_cost(const std::vector<SelfCostRow>& rows, const std::set<std::uint32_t>& program_threads) {
  Impl& w = *impl_;
  if (rows.empty()) return {};
  if (auto r = w.exec("BEGIN"); !r) return r;
  {
    Statement s(w.db, "INSERT INTO KERNSCOPE_TRACER_COST (globalTid, site, calls, totalNs, programThread) VALUES (?,?,?,?,?)");
    if (!s.ok()) return w.fail("preparing the tracer's cost rows");
    for (const auto& row : rows) {
      s.i64(1, global_tid(w.pid, row.tid)).text(2, std::string(cost_site_name(row.site))).i64(3, row.calls).i64(4, row.total_ns);
      s.i64(5, program_threads.contains(row.tid) ? 1 : 0);
      if (!s.step()) return w.fail("writing the tracer's cost rows");
    }
  }
  return w.exec("COMMIT");
}

Result<void> TraceDbWriter::discard() {
  Impl& w = *impl_;
  if (w.db) {
    sqlite3_close(w.db);
    w.db = nullptr;
  }
  Result<void> result;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string file = w.path + suffix;
    if (std::remove(file.c_str()) != 0 && *suffix == '\0') result = make_error(ErrorCode::kIo, w.path + ": cannot remove the empty trace");
  }
  return result;
}

Result<void> TraceDbWriter::finish(const std::vector<std::pair<std::string, std::string>>& info,
                                   const std::string& process_name,
                                   const std::vector<std::pair<std::uint32_t, std::string>>& thread_names,
                                   StringPool& strings) {
  Impl& w = *impl_;
  std::vector<std::pair<std::int64_t, StringId>> names;
  for (const auto& [tid, name] : thread_names) names.emplace_back(global_tid(w.pid, tid), strings.intern(name));
  if (auto r = append(RecordBatch{}, strings); !r) return r;  // the thread names' strings
  if (auto r = w.exec("BEGIN"); !r) return r;
  {
    Statement s(w.db, "INSERT INTO KERNSCOPE_TRACER_INFO (name, value) VALUES (?, ?)");
    for (const auto& [k, v] : info) {
      s.text(1, k).text(2, v);
      if (!s.step()) return w.fail("writing tracer info");
    }
    Statement meta(w.db, "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)");
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"EXPORT_PRODUCT_NAME", "kernscope tracer"}, {"EXPORT_SCHEMA_VERSION", "3.20.3"}}) {
      meta.text(1, k).text(2, v);
      if (!meta.step()) return w.fail("writing metadata");
    }
    Statement p(w.db, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)");
    p.i64(1, global_pid(w.pid)).i64(2, w.pid).text(3, process_name);
    if (!p.step()) return w.fail("writing processes");
    Statement t(w.db, "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 0, ?)");
    for (const auto& [gtid, name] : names) {
      t.i64(1, name).i64(2, gtid);
      if (!t.step()) return w.fail("writing thread names");
    }
  }
  if (auto r = w.exec("COMMIT"); !r) return r;
  // Back to the rollback journal: SQLite copies the log into the file and deletes it, and the
  // file's header says it is an ordinary database again, so the finished trace is one file that
  // can be copied alone, read by any SQLite (or from memory, as a .sqlite.gz) and opened immutable.
  // That needs a moment without readers (a sqlite3 left open on the live trace): wait a little.
  sqlite3_busy_timeout(w.db, 1000);
  auto mode = w.pragma("PRAGMA journal_mode=DELETE");
  if (!mode || *mode != "delete") {
    return make_error(ErrorCode::kIo, (mode ? w.path + ": journal mode stays " + *mode : mode.error().message) +
                                          " (the trace is complete, but its -wal file holds part of it: keep it beside the file)");
  }
  return {};
}

}  // namespace kernscope::tracer
