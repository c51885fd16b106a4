#include "base/stage_clock.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace kernscope {
namespace {

// Resident set now, in KiB (0 where /proc cannot be read): statm counts pages.
long resident_kib() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  static const long page_kib = sysconf(_SC_PAGESIZE) / 1024;
  return resident * page_kib;
}

}  // namespace

bool stage_clock_on() {
  static const bool on = std::getenv("KERNSCOPE_PHASE_TIMES") != nullptr;
  return on;
}

void stage_mark(std::string_view what) {
  if (!stage_clock_on()) return;
  static const auto first = std::chrono::steady_clock::now();
  static std::atomic<int> threads{0};
  thread_local const int thread = threads.fetch_add(1);
  // Read and printed under one lock: the lines of concurrent stages come in the order of their times.
  static std::mutex printing;
  const std::lock_guard lock(printing);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(stderr, "kernscope: stage %.3f %.*s thread %d rss %.1f MiB peak %.1f MiB\n", seconds, static_cast<int>(what.size()), what.data(),
               thread, static_cast<double>(resident_kib()) / 1024.0, static_cast<double>(usage.ru_maxrss) / 1024.0);
}

}  // namespace kernscope
