#include "base/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace kernscope::progress {
namespace {

std::atomic<bool> g_enabled{false};
std::atomic<std::int64_t> g_after_ns{2'000'000'000};

// The line, shared by every meter and thread. `owner` identifies the meter it shows (compared, never
// dereferenced: meters copy what the line needs into it).
struct Line {
  const void* owner = nullptr;
  std::string label, unit;
  std::uint64_t total = 0, done = 0;
  std::chrono::steady_clock::time_point start;
  bool printed = false;
};
std::mutex g_print;  // guards g_line and the terminal
Line g_line;
std::atomic<std::int64_t> g_next_print_ns{0};  // steady-clock time before which no update is printed

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

void print_line() {  // g_print held
  const auto elapsed = std::chrono::steady_clock::now() - g_line.start;
  std::string line = "kernscope: " + g_line.label + ": " + amount(g_line.done, g_line.unit);
  if (g_line.total > 0) {
    char pct[48];
    std::snprintf(pct, sizeof pct, " of %s (%.0f %%)", amount(g_line.total, g_line.unit).c_str(),
                  100.0 * static_cast<double>(std::min(g_line.done, g_line.total)) / static_cast<double>(g_line.total));
    line += pct;
  }
  char time[32];
  std::snprintf(time, sizeof time, ", %.1f s", std::chrono::duration<double>(elapsed).count());
  line += time;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  g_line.printed = true;
}

}  // namespace

void enable(bool on, std::chrono::milliseconds after) {
  g_after_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(after).count());
  g_enabled.store(on);
}

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

Meter::Meter(std::string label, std::string unit, std::uint64_t total)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), start_(std::chrono::steady_clock::now()) {
  std::lock_guard lock(g_print);
  if (g_line.owner == nullptr) g_line = Line{this, label_, unit_, total_, 0, start_, false};
}

Meter::~Meter() {
  std::lock_guard lock(g_print);
  if (g_line.owner != this) return;
  if (g_line.printed) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  g_line = Line{};
}

void Meter::add(std::uint64_t amount_done) {
  const auto done = done_.fetch_add(amount_done, std::memory_order_relaxed) + amount_done;
  if (!enabled()) return;
  const auto now = now_ns();
  if (now < g_next_print_ns.load(std::memory_order_relaxed)) return;
  std::unique_lock lock(g_print, std::try_to_lock);  // a busy line: the next add prints
  if (!lock.owns_lock()) return;
  if (g_line.owner == nullptr) g_line = Line{this, label_, unit_, total_, 0, start_, false};
  if (g_line.owner == this) g_line.done = done;
  const auto shown_for = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - g_line.start).count();
  if (shown_for < g_after_ns.load()) return;
  g_next_print_ns.store(now + 200'000'000, std::memory_order_relaxed);
  print_line();
}

}  // namespace kernscope::progress
