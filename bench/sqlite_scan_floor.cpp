// The physical floor of reading an export: a bare, single-threaded SQLite scan of the rows and
// columns that kern_sum + api_sum + mem_time_sum + nvtx_sum need, with nothing done to them but a
// checksum. kernscope's reader is compared against this (bench/RESULTS.md).
//   sqlite_scan_floor EXPORT.sqlite [REPEATS]
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Scan {
  const char* sql;
  int columns;
};

constexpr Scan kScans[] = {
    {"SELECT start, end, globalPid, deviceId, correlationId, demangledName, shortName, mangledName FROM CUPTI_ACTIVITY_KIND_KERNEL", 8},
    {"SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME", 5},
    {"SELECT start, end, globalPid, bytes, copyKind, srcKind, dstKind, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY", 8},
    {"SELECT start, end, globalPid, bytes, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET", 5},
    {"SELECT start, end, globalTid, eventType, domainId, text, textId FROM NVTX_EVENTS", 7},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXPORT.sqlite [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 1;
  const std::string uri = std::string("file:") + argv[1] + "?mode=ro&immutable=1";
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "cannot open %s\n", argv[1]);
      return 2;
    }
    long long rows = 0, checksum = 0;
    for (const auto& scan : kScans) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, scan.sql, -1, &stmt, nullptr) != SQLITE_OK) continue;  // table absent
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        for (int c = 0; c < scan.columns; ++c) checksum += sqlite3_column_int64(stmt, c);
        ++rows;
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("scan_floor rows=%lld seconds=%.4f checksum=%lld\n", rows, s, checksum);
  }
  return 0;
}
