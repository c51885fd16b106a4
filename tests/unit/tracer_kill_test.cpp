// A tracer killed at any moment leaves a file that kernscope reads as exactly the batches committed
// before the kill, and says the trace was cut short. Each case forks a real writer process (the
// tracer's TraceDbWriter with synthetic kernel rows, no GPU) that reports on a pipe each batch it
// starts and each batch it has committed; the writer is SIGKILLed, then kernscope's reader opens
// the file and must find a whole number of batches: the committed ones, plus at most the batch
// whose commit was under way when the writer died (its commit may have completed before the
// report). Kernel i carries correlation id i, so the rows read must be exactly 0..n-1.
//
// Two ways of killing:
//  - from outside, after random delays: the program dies wherever it happens to be;
//  - from inside, at a chosen file operation: the writer's process uses an SQLite VFS that wraps
//    the default one and raises SIGKILL just before its N-th write, truncate or delete. A first run
//    lists every operation with the phase it happened in (creating the file, inside a batch before
//    its COMMIT, i.e. pages SQLite spilled from its cache in the middle of a large batch, during the
//    COMMIT, which also runs the checkpoints into the file, while finishing), then the writer is
//    killed at operations spread over each phase; and after a batch's report (between batches).
//
// Each read must leave the writer's files as they were (same bytes) and no temporary copy behind.
//
// Checked against the old behaviour, by relinking this test with trace_db_writer.cpp without its
// journal_mode=WAL line and sqlite_db.cpp with pending_sidecars() replaced by an empty list:
//  - rollback journal + immutable reader (the old tracer and reader): both tests fail, e.g. "360
//    kernels read; committed 1 batches (300 kernels)" when killed in the large batch after SQLite
//    spilled pages into the file (operation 139, phase "ad");
//  - WAL + immutable reader: both fail, "SQLite file is not an Nsight Systems export" with batches
//    committed (the schema was still in the -wal), or 72,300 kernels read of 73,507 committed;
//  - rollback journal + this reader (which rolls the hot journal back in a copy): both pass.
// Two more cases: reading while the writer is at work (failed about 1 run in 5, "database disk
// image is malformed", when the reader did not copy again a file a checkpoint rewrote during the
// copy), and the file alone gzip-compressed without its -wal (failed, "unable to open database
// file", without open_image's WAL-header rewrite).
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernscope/open.hpp"
#include "analyses/overview.hpp"
#include "tracer/trace_db_writer.hpp"

namespace kernscope::tracer {
namespace {

namespace fs = std::filesystem;

// Batch sizes: a large batch (72,000 kernel rows, about 5 MB: more than twice SQLite's default
// 2 MB page cache, so pages are spilled before the COMMIT during more than half of it, and the log
// outgrows the 1,000-page (4 MB) automatic checkpoint) between small ones. All different, so that
// a partial batch cannot add up to a whole number of batches.
const std::vector<int> kBatchRows = {300, 72000, 7, 1200};

// Batch b has kBatchRows[b % 4] rows (a writer may go round the list more than once).
int batch_rows(int b) { return kBatchRows[static_cast<std::size_t>(b) % kBatchRows.size()]; }

int total_rows(int batches) {
  int n = 0;
  for (int i = 0; i < batches; ++i) n += batch_rows(i);
  return n;
}

// ---- the writer's process ---------------------------------------------------------------------

// What the writer was doing: creating the file, between batches, inside a batch before its COMMIT,
// in the COMMIT (with the checkpoint that may follow it), finishing.
enum Stage : char { kCreating = 'c', kBetween = 'b', kInBatch = 'a', kCommitting = 'm', kFinishing = 'f' };

// One message on the pipe (smaller than PIPE_BUF: written whole).
struct Report {
  char type = 0;   // 'S' batch started, 'C' batch committed, 'F' finished and closed, 'O' file operation, 'K' killed
  char stage = 0;  // a Stage, for 'O' and 'K'
  char file = 0;   // 'd' the database, 'w' its -wal, 'j' its -journal, 'o' another file
  std::uint32_t n = 0;
};

int g_report_fd = -1;
long g_kill_at = -1;  // kill before this file operation (1-based); -1: never
bool g_list_ops = false;
long g_ops = 0;
Stage g_stage = kCreating;
bool g_in_commit = false;

void report(char type, std::uint32_t n, char file = 0) {
  const Report r{type, static_cast<char>(g_in_commit && g_stage == kInBatch ? kCommitting : g_stage), file, n};
  if (write(g_report_fd, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(97);
}

void before_file_operation(char file) {
  ++g_ops;
  if (g_list_ops) report('O', static_cast<std::uint32_t>(g_ops), file);
  if (g_ops == g_kill_at) {
    report('K', static_cast<std::uint32_t>(g_ops), file);
    kill(getpid(), SIGKILL);
  }
}

// The VFS: every call goes to the default VFS; writes, truncates and deletes pass through
// before_file_operation first.
sqlite3_vfs* g_real = nullptr;

struct ShimFile {
  sqlite3_file base;
  char kind;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
ShimFile* shim(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f); }

const sqlite3_io_methods kShimMethods = {
    3,
    [](sqlite3_file* f) { return shim(f)->real()->pMethods->xClose(shim(f)->real()); },
    [](sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return shim(f)->real()->pMethods->xRead(shim(f)->real(), b, n, o); },
    [](sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
      before_file_operation(shim(f)->kind);
      return shim(f)->real()->pMethods->xWrite(shim(f)->real(), b, n, o);
    },
    [](sqlite3_file* f, sqlite3_int64 size) {
      before_file_operation(shim(f)->kind);
      return shim(f)->real()->pMethods->xTruncate(shim(f)->real(), size);
    },
    [](sqlite3_file* f, int flags) {
      before_file_operation(shim(f)->kind);
      return shim(f)->real()->pMethods->xSync(shim(f)->real(), flags);
    },
    [](sqlite3_file* f, sqlite3_int64* size) { return shim(f)->real()->pMethods->xFileSize(shim(f)->real(), size); },
    [](sqlite3_file* f, int l) { return shim(f)->real()->pMethods->xLock(shim(f)->real(), l); },
    [](sqlite3_file* f, int l) { return shim(f)->real()->pMethods->xUnlock(shim(f)->real(), l); },
    [](sqlite3_file* f, int* out) { return shim(f)->real()->pMethods->xCheckReservedLock(shim(f)->real(), out); },
    [](sqlite3_file* f, int op, void* arg) { return shim(f)->real()->pMethods->xFileControl(shim(f)->real(), op, arg); },
    [](sqlite3_file* f) { return shim(f)->real()->pMethods->xSectorSize(shim(f)->real()); },
    [](sqlite3_file* f) { return shim(f)->real()->pMethods->xDeviceCharacteristics(shim(f)->real()); },
    [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
      return shim(f)->real()->pMethods->xShmMap(shim(f)->real(), page, size, extend, out);
    },
    [](sqlite3_file* f, int offset, int n, int flags) { return shim(f)->real()->pMethods->xShmLock(shim(f)->real(), offset, n, flags); },
    [](sqlite3_file* f) { shim(f)->real()->pMethods->xShmBarrier(shim(f)->real()); },
    [](sqlite3_file* f, int del) { return shim(f)->real()->pMethods->xShmUnmap(shim(f)->real(), del); },
    [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return shim(f)->real()->pMethods->xFetch(shim(f)->real(), o, n, p); },
    [](sqlite3_file* f, sqlite3_int64 o, void* p) { return shim(f)->real()->pMethods->xUnfetch(shim(f)->real(), o, p); },
};

char kind_of_name(const char* name) {
  const std::string_view s(name ? name : "");
  return s.ends_with("-wal") ? 'w' : s.ends_with("-journal") ? 'j' : 'o';
}

sqlite3_vfs g_shim_vfs = {
    3, 0, 0, nullptr, "kernscope_kill_shim", nullptr,
    [](sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
      auto* s = shim(f);
      s->kind = (flags & SQLITE_OPEN_MAIN_DB) ? 'd' : (flags & SQLITE_OPEN_WAL) ? 'w' : (flags & SQLITE_OPEN_MAIN_JOURNAL) ? 'j' : 'o';
      const int rc = g_real->xOpen(g_real, name, s->real(), flags, out_flags);
      // SQLite calls xClose only on files whose pMethods is set.
      s->base.pMethods = s->real()->pMethods ? &kShimMethods : nullptr;
      return rc;
    },
    [](sqlite3_vfs*, const char* name, int sync_dir) {
      before_file_operation(kind_of_name(name));
      return g_real->xDelete(g_real, name, sync_dir);
    },
    [](sqlite3_vfs*, const char* name, int flags, int* out) { return g_real->xAccess(g_real, name, flags, out); },
    [](sqlite3_vfs*, const char* name, int n, char* out) { return g_real->xFullPathname(g_real, name, n, out); },
    [](sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); },
    [](sqlite3_vfs*, int n, char* out) { g_real->xDlError(g_real, n, out); },
    [](sqlite3_vfs*, void* h, const char* sym) { return g_real->xDlSym(g_real, h, sym); },
    [](sqlite3_vfs*, void* h) { g_real->xDlClose(g_real, h); },
    [](sqlite3_vfs*, int n, char* out) { return g_real->xRandomness(g_real, n, out); },
    [](sqlite3_vfs*, int us) { return g_real->xSleep(g_real, us); },
    [](sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); },
    [](sqlite3_vfs*, int n, char* out) { return g_real->xGetLastError(g_real, n, out); },
    [](sqlite3_vfs*, sqlite3_int64* out) { return g_real->xCurrentTimeInt64(g_real, out); },
    [](sqlite3_vfs*, const char* name, sqlite3_syscall_ptr p) { return g_real->xSetSystemCall(g_real, name, p); },
    [](sqlite3_vfs*, const char* name) { return g_real->xGetSystemCall(g_real, name); },
    [](sqlite3_vfs*, const char* name) { return g_real->xNextSystemCall(g_real, name); },
};

// Every connection the writer opens reports which statement runs, so that file operations are
// told apart: those of a batch's inserts (spilled pages) from those of its COMMIT.
int on_statement(unsigned type, void*, void*, void* sql) {
  if (type == SQLITE_TRACE_STMT) {
    const std::string_view text(static_cast<const char*>(sql));
    if (text == "COMMIT") g_in_commit = true;
    if (text == "BEGIN") g_in_commit = false;
  }
  return 0;
}
int watch_statements(sqlite3* db, char**, const sqlite3_api_routines*) {
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT, on_statement, nullptr);
  return SQLITE_OK;
}

struct WriterPlan {
  long kill_at_operation = -1;  // SIGKILL itself before this file operation
  int kill_after_batch = -1;    // SIGKILL itself after reporting this batch committed (0-based)
  bool list_operations = false;
  int rounds = 1;               // times the writer goes through kBatchRows
};

[[noreturn]] void run_writer(const std::string& path, const WriterPlan& plan, int fd) {
  g_report_fd = fd;
  g_kill_at = plan.kill_at_operation;
  g_list_ops = plan.list_operations;
  g_real = sqlite3_vfs_find(nullptr);
  g_shim_vfs.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
  g_shim_vfs.mxPathname = g_real->mxPathname;
  if (sqlite3_vfs_register(&g_shim_vfs, 1) != SQLITE_OK) _exit(90);
  sqlite3_auto_extension(reinterpret_cast<void (*)()>(watch_statements));

  g_stage = kCreating;
  auto writer = TraceDbWriter::create(path, 4242);
  if (!writer) _exit(91);
  StringPool strings;
  const StringId names[] = {strings.intern("gemv_k"), strings.intern("rmsnorm_kernel"), strings.intern("flash_fwd")};
  std::uint32_t row = 0;
  for (int b = 0; b < plan.rounds * static_cast<int>(kBatchRows.size()); ++b) {
    g_stage = kBetween;
    RecordBatch batch;
    for (int i = 0; i < batch_rows(b); ++i, ++row) {
      KernelRow k;
      k.start = 1'000'000'000 + std::int64_t{row} * 1000;
      k.end = k.start + 700 + row % 97;
      k.stream = 7 + row % 3;
      k.context = 1;
      k.correlation = row;
      k.grid[0] = 132;
      k.grid[1] = k.grid[2] = 1;
      k.block[0] = 256;
      k.block[1] = k.block[2] = 1;
      k.registers = 40;
      k.demangled = k.short_name = k.mangled = names[row % 3];
      batch.kernels.push_back(k);
    }
    report('S', static_cast<std::uint32_t>(b));
    g_stage = kInBatch;
    g_in_commit = false;
    if (!(*writer)->append(batch, strings)) _exit(92);
    g_stage = kBetween;
    g_in_commit = false;
    report('C', static_cast<std::uint32_t>(b));
    if (static_cast<int>(b) == plan.kill_after_batch) kill(getpid(), SIGKILL);
  }
  g_stage = kFinishing;
  if (!(*writer)->finish({{"tracer", "kernscope kill test"}}, "writer", {{4243, "main"}}, strings)) _exit(93);
  writer->reset();
  report('F', 0);
  _exit(0);
}

// ---- the test's side --------------------------------------------------------------------------

struct Outcome {
  int status = 0;
  std::vector<Report> reports;
  int started = 0, committed = 0;
  bool finished = false;
  std::optional<Report> killed_at;  // where it killed itself
};

// Runs a writer; with `delay`, SIGKILLs it from outside after that long.
Outcome run_writer_process(const std::string& path, const WriterPlan& plan,
                           std::optional<std::chrono::microseconds> delay = std::nullopt) {
  // No file of an earlier run: a writer killed before it creates its own must not leave one.
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix);
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    alarm(30);  // a writer that never ends would hang the test: SIGALRM ends it
    run_writer(path, plan, fds[1]);
  }
  close(fds[1]);
  std::thread killer;
  if (delay) killer = std::thread([child, d = *delay] {
    std::this_thread::sleep_for(d);
    kill(child, SIGKILL);  // the child is not reaped before the join: its pid cannot be reused
  });
  Outcome out;
  Report r;
  while (read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r)) {
    out.reports.push_back(r);
    if (r.type == 'S') ++out.started;
    if (r.type == 'C') ++out.committed;
    if (r.type == 'F') out.finished = true;
    if (r.type == 'K') out.killed_at = r;
  }
  close(fds[0]);
  if (killer.joinable()) killer.join();
  EXPECT_EQ(waitpid(child, &out.status, 0), child);
  return out;
}

std::map<std::string, std::string> snapshot(const std::string& path) {
  std::map<std::string, std::string> files;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::ifstream in(path + suffix, std::ios::binary);
    if (!in) continue;
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[suffix] = bytes.str();
  }
  return files;
}

class TracerKill : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernscope_kill_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tmp");
    if (const char* old = std::getenv("TMPDIR")) old_tmpdir_ = old;
    // The reader's temporary copies go here, where the test can see that none is left.
    setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
    path_ = (dir_ / "trace.sqlite").string();
  }
  void TearDown() override {
    if (old_tmpdir_) setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    else unsetenv("TMPDIR");
    fs::remove_all(dir_);
  }

  // Reads the file a writer left and checks it against what the writer reported.
  void check(const Outcome& run, const std::string& what) {
    SCOPED_TRACE(what);
    const auto before = snapshot(path_);
    auto trace = open_trace(path_);
    EXPECT_EQ(snapshot(path_), before) << "the reader changed the writer's files";
    EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "a temporary copy was left behind";
    const int batches = static_cast<int>(kBatchRows.size());

    // The batches that may be in the file: those reported committed, and the one under way if
    // its COMMIT had started (its commit may complete just before the kill).
    int at_least = run.committed, at_most = run.started;
    if (run.killed_at && run.killed_at->stage != kCommitting) at_most = run.committed;
    // Must the file say it was cut short? Not when killed while finishing, after every batch: the
    // tracer's rows may have been committed then.
    const bool cut_short = !run.finished && run.committed < batches;
    if (!trace) {
      // Killed before the file had its schema: nothing was committed, and the error is a clear one.
      EXPECT_EQ(run.committed, 0) << trace.error().message;
      EXPECT_TRUE(run.killed_at ? run.killed_at->stage == kCreating : run.started == 0) << trace.error().message;
      EXPECT_EQ(trace.error().message.find('\n'), std::string::npos);
      ++unreadable_;
      return;
    }
    const auto& k = trace->kernels;
    int whole = -1;
    for (int b = at_least; b <= at_most; ++b) {
      if (static_cast<int>(k.size()) == total_rows(b)) whole = b;
    }
    ASSERT_NE(whole, -1) << k.size() << " kernels read; committed " << run.committed << " batches ("
                         << total_rows(run.committed) << " kernels), started " << run.started;
    for (std::size_t i = 0; i < k.size(); ++i) {
      ASSERT_EQ(k.correlation_id[i], i) << "kernel " << i;
    }
    bool said = false;
    for (const auto& m : describe(*trace).notes) said |= m.text.find("cut short") != std::string::npos && m.severity == NoteSeverity::kDataLoss;
    if (cut_short) {
      EXPECT_TRUE(said) << "no note that the trace was cut short";
    }
    if (run.finished) {
      EXPECT_EQ(whole, batches);
      EXPECT_FALSE(said);
      EXPECT_EQ(trace->source.format, "kernscope-tracer");
      // One self-contained file, marked as not in WAL mode (file format: bytes 18 and 19 of the
      // header are 1 for the rollback journal, 2 for WAL).
      for (const char* suffix : {"-wal", "-shm", "-journal"}) EXPECT_FALSE(fs::exists(path_ + suffix)) << suffix;
      const std::string head = snapshot(path_)[""].substr(0, 20);
      EXPECT_EQ(head[18], 1);
      EXPECT_EQ(head[19], 1);
    }
    ++read_;
  }

  fs::path dir_;
  std::string path_;
  std::optional<std::string> old_tmpdir_;
  int read_ = 0, unreadable_ = 0;
};

TEST_F(TracerKill, KilledAtRandomMomentsReadsExactlyTheCommittedBatches) {
  const auto begin = std::chrono::steady_clock::now();
  // A whole run's duration bounds the delays.
  const Outcome whole = run_writer_process(path_, {});
  const auto span = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - begin);
  ASSERT_TRUE(WIFEXITED(whole.status) && WEXITSTATUS(whole.status) == 0) << whole.status;
  check(whole, "finished run");

  std::mt19937 random(20251123);
  std::uniform_int_distribution<long> delay(0, span.count());
  std::map<std::string, int> seen;
  constexpr int kRuns = 50;
  for (int i = 0; i < kRuns; ++i) {
    const auto d = std::chrono::microseconds(delay(random));
    const Outcome run = run_writer_process(path_, {}, d);
    check(run, "run " + std::to_string(i) + ", killed after " + std::to_string(d.count()) + " us");
    if (run.finished) ++seen["finished before the kill"];
    else ASSERT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGKILL) << run.status;
    if (!run.finished) ++seen[run.started > run.committed ? "in a batch" : "between batches or creating"];
    if (HasFatalFailure()) return;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::string summary;
  for (const auto& [k, v] : seen) summary += k + ": " + std::to_string(v) + "; ";
  std::printf("%d runs in %.1f s (one whole run %.0f ms): %s\n", kRuns, seconds, span.count() / 1e3, summary.c_str());
  EXPECT_GE(seen["in a batch"], 10);  // the delays do reach the batches
}

TEST_F(TracerKill, KilledAtEveryKindOfFileOperationReadsExactlyTheCommittedBatches) {
  const auto begin = std::chrono::steady_clock::now();
  // Every file operation of a whole run, with the phase it happens in.
  const Outcome listing = run_writer_process(path_, {.list_operations = true});
  ASSERT_TRUE(listing.finished);
  std::map<std::string, std::vector<long>> operations;  // phase and file -> operation numbers
  for (const auto& r : listing.reports) {
    if (r.type == 'O') operations[std::string{r.stage, r.file}].push_back(r.n);
  }
  // Pages spilled by the large batch before its COMMIT (into the -wal; with a rollback journal,
  // into the -journal and the file) and the COMMIT's writes (with WAL: the log, then the checkpoint
  // that copies it into the file) must happen, or the kills below would miss them.
  std::size_t spilled = 0, committing = 0;
  for (const auto& [phase, numbers] : operations) {
    if (phase[0] == kInBatch) spilled += numbers.size();
    if (phase[0] == kCommitting) committing += numbers.size();
  }
  ASSERT_GT(spilled, 0u) << "no page written before a COMMIT: no batch spilled SQLite's cache";
  ASSERT_GT(committing, 0u);

  // Operations spread evenly over each phase and file, the first and last included: 8 in the
  // batches, 5 while finishing, 3 while creating (where nothing was committed yet).
  std::map<std::string, int> killed;
  int runs = 0;
  for (const auto& [phase, numbers] : operations) {
    const std::size_t wanted = phase[0] == kCreating ? 3 : phase[0] == kFinishing ? 5 : 8;
    const std::size_t picks = std::min(wanted, numbers.size());
    for (std::size_t i = 0; i < picks; ++i) {
      const long op = numbers[picks == 1 ? 0 : i * (numbers.size() - 1) / (picks - 1)];
      const Outcome run = run_writer_process(path_, {.kill_at_operation = op});
      ASSERT_TRUE(run.killed_at.has_value()) << "operation " << op << " not reached";
      EXPECT_EQ(std::string({run.killed_at->stage, run.killed_at->file}), phase) << "operation " << op;
      ASSERT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGKILL) << run.status;
      check(run, "killed before operation " + std::to_string(op) + " (" + phase + ")");
      ++killed[phase];
      ++runs;
      if (HasFatalFailure()) return;
    }
  }
  // And between batches, right after each batch is reported committed.
  for (int b = 0; b < static_cast<int>(kBatchRows.size()); ++b) {
    const Outcome run = run_writer_process(path_, {.kill_after_batch = b});
    ASSERT_EQ(run.committed, b + 1);
    check(run, "killed after batch " + std::to_string(b));
    ++killed["between batches"];
    ++runs;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::string summary;
  for (const auto& [k, v] : killed) summary += k + ": " + std::to_string(v) + "; ";
  std::printf("%d kills in %.1f s, %d files read, %d unreadable (killed before the schema was committed): %s\n",
              runs, seconds, read_, unreadable_, summary.c_str());
  EXPECT_GE(runs, 50);
}

// Read while the writer is still at work: every read finds whole batches, at least those reported
// committed before it began and at most those started when it ended, and leaves no copy behind.
// (The reader copies the file and its -wal, again if a checkpoint rewrote the file meanwhile.)
TEST_F(TracerKill, ReadWhileWritingFindsWholeBatches) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    alarm(60);
    run_writer(path_, {.rounds = 5}, fds[1]);
  }
  close(fds[1]);
  std::atomic<int> started{0}, committed{0};
  std::atomic<bool> ended{false};
  std::thread reports([&] {
    Report r;
    while (read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r)) {
      if (r.type == 'S') ++started;
      if (r.type == 'C') ++committed;
    }
    ended = true;
  });
  int reads = 0;
  while (!ended) {
    const int at_least = committed;
    auto trace = open_trace(path_);
    const int at_most = started;
    EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "a temporary copy was left behind";
    if (!trace) {
      EXPECT_EQ(at_least, 0) << trace.error().message;  // not created yet
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    const auto& k = trace->kernels;
    int whole = -1;
    for (int b = at_least; b <= at_most; ++b) {
      if (static_cast<int>(k.size()) == total_rows(b)) whole = b;
    }
    ASSERT_NE(whole, -1) << k.size() << " kernels read; committed " << at_least << " batches before, "
                         << at_most << " started after";
    for (std::size_t i = 0; i < k.size(); ++i) ASSERT_EQ(k.correlation_id[i], i) << "kernel " << i;
    if (whole > 0 && whole < at_most) ++reads;  // read in the middle of the run
  }
  reports.join();
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GE(reads, 3) << "too few reads while the writer was at work to show anything";
  std::printf("%d reads while writing\n", reads);
}

// A cut-short trace compressed without its -wal (gzip of the file alone): the file, still marked
// as in WAL mode, is read from memory as SQLite reads it alone, the database of its last
// checkpoint, and noted as cut short.
TEST_F(TracerKill, FileAloneCompressedWithoutItsLogReadsAsOfItsLastCheckpoint) {
  const Outcome run = run_writer_process(path_, {.kill_after_batch = 2});
  ASSERT_EQ(run.committed, 3);
  ASSERT_TRUE(fs::exists(path_ + "-wal"));
  // What SQLite reads from the file alone: a copy without its -wal, opened by sqlite3 itself.
  const std::string alone = (dir_ / "alone.sqlite").string();
  fs::copy_file(path_, alone);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(alone.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* count = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", -1, &count, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
  const std::size_t checkpointed = static_cast<std::size_t>(sqlite3_column_int64(count, 0));
  sqlite3_finalize(count);
  sqlite3_close(db);
  EXPECT_GT(checkpointed, 0u) << "no checkpoint before the kill: the case below would read an empty trace";

  const std::string gz = path_ + ".gz";
  gzFile out = gzopen(gz.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  const std::string bytes = snapshot(path_)[""];
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  auto trace = open_trace(gz);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  EXPECT_EQ(trace->kernels.size(), checkpointed);
  bool said = false;
  for (const auto& m : trace->notes) said |= m.kind == "cut_short" && m.severity == NoteSeverity::kDataLoss;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace kernscope::tracer
