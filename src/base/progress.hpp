// A progress line on standard error for long work (reading a 1 GB export, many ranks), for people
// watching a terminal: nothing for the first 2 seconds, then at most five updates a second on one
// line that is erased when the work ends. Off unless the front end turns it on (the CLI does when
// standard error is a terminal and --quiet is not given), so pipes, files, tests and Python see
// nothing. Work reports its amount through a Meter; adding to it is one relaxed atomic add, so
// readers add per block of rows or bytes, not per row.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace kernscope::progress {

// One line shows one meter: the first alive (a multi-trace command's "reading traces" over each
// reader's rows; of meters on several threads, the first until it ends). Any meter's work wakes the
// line, so it moves (its time) while a nested reader works.
//
// Turns the progress line on or off for the whole process. `after`: how long work runs before its
// line appears (2 s; tests shorten it with KERNSCOPE_PROGRESS_AFTER_MS).
void enable(bool on, std::chrono::milliseconds after = std::chrono::milliseconds(2000));
bool enabled();

class Meter {
 public:
  // `label`: what is being done ("reading trace.sqlite"); `unit`: what add() counts ("rows",
  // "bytes", "traces"); `total`: how many there will be, 0 when not known (then no percentage).
  Meter(std::string label, std::string unit, std::uint64_t total = 0);
  ~Meter();
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;

  void add(std::uint64_t amount);

 private:
  std::string label_, unit_;
  std::uint64_t total_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::uint64_t> done_{0};
};

}  // namespace kernscope::progress
