#include "base/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace kernscope::progress {
namespace {

std::atomic<bool> g_enabled{false};
std::atomic<std::int64_t> g_after_ns{2'000'000'000};
std::mutex g_print;  // one line on the terminal, whichever thread updates it
std::atomic<int> g_depth{0};  // meters alive (only the outermost prints)

std::int64_t since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

std::string amount(std::uint64_t n, const std::string& unit) {
  char text[64];
  if (unit == "bytes") {
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(n) / 1e6);
  } else if (n >= 10'000'000) {
    std::snprintf(text, sizeof text, "%.1f M %s", static_cast<double>(n) / 1e6, unit.c_str());
  } else {
    std::snprintf(text, sizeof text, "%llu %s", static_cast<unsigned long long>(n), unit.c_str());
  }
  return text;
}

}  // namespace

void enable(bool on, std::chrono::milliseconds after) {
  g_after_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(after).count());
  g_enabled.store(on);
}

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

Meter::Meter(std::string label, std::string unit, std::uint64_t total)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), start_(std::chrono::steady_clock::now()),
      next_print_ns_(g_after_ns.load()), depth_(g_depth.fetch_add(1)) {}

Meter::~Meter() {
  g_depth.fetch_sub(1);
  if (!printed_.load()) return;
  std::lock_guard lock(g_print);
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

void Meter::add(std::uint64_t amount_done) {
  const auto done = done_.fetch_add(amount_done, std::memory_order_relaxed) + amount_done;
  if (depth_ == 0 && enabled()) maybe_print(done);
}

void Meter::maybe_print(std::uint64_t done) {
  const auto elapsed = since(start_);
  auto next = next_print_ns_.load(std::memory_order_relaxed);
  if (elapsed < next) return;
  // One thread prints each update; the others go on with their work.
  if (!next_print_ns_.compare_exchange_strong(next, elapsed + 200'000'000)) return;
  std::unique_lock lock(g_print, std::try_to_lock);
  if (!lock.owns_lock()) return;
  std::string line = "kernscope: " + label_ + ": " + amount(done, unit_);
  if (total_ > 0) {
    char pct[48];
    std::snprintf(pct, sizeof pct, " of %s (%.0f %%)", amount(total_, unit_).c_str(),
                  100.0 * static_cast<double>(std::min(done, total_)) / static_cast<double>(total_));
    line += pct;
  }
  char time[32];
  std::snprintf(time, sizeof time, ", %.1f s", static_cast<double>(elapsed) / 1e9);
  line += time;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  printed_.store(true);
}

}  // namespace kernscope::progress
