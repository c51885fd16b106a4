// The tracer timing its own code where it runs on threads it does not own (CUPTI's callbacks on
// the program's launching threads, its set-up inside cuInit, its finish at exit): per thread and
// site, a call count and summed nanoseconds from CLOCK_MONOTONIC (vDSO, no system call). Each
// thread writes only its own counters (relaxed atomics), so timing takes no lock after the
// thread's first call; the cost of the two clock reads per call is measured at start and stated.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace kernscope::tracer {

enum class CostSite : std::uint8_t { kInit, kBufferRequest, kBufferComplete, kNvtxCallback, kApiCallback, kFinish, kCount };
std::string_view cost_site_name(CostSite site);

struct SelfCostRow {
  std::uint32_t tid = 0;
  CostSite site = CostSite::kInit;
  std::int64_t calls = 0, total_ns = 0;
};

std::int64_t monotonic_ns();

class SelfCost {
 public:
  // Adds one timed call on the calling thread.
  void add(CostSite site, std::int64_t ns);
  // Every thread's non-zero counters, by thread then site. Safe while other threads still count
  // (their counts then may or may not include calls in flight).
  std::vector<SelfCostRow> rows() const;
  // Nanoseconds of one timing (two clock reads and the counter updates), median of `samples`.
  static double timing_cost_ns(int samples = 2001);

 private:
  struct PerThread {
    std::uint32_t tid = 0;
    std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(CostSite::kCount)> calls{}, ns{};
  };
  PerThread& mine();
  static std::uint64_t next_id();
  const std::uint64_t id_ = next_id();  // not the address: a new SelfCost may reuse a freed one's
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<PerThread>> threads_;
};

// Times the enclosing scope into `cost` (nothing when `cost` is null).
class ScopedCost {
 public:
  ScopedCost(SelfCost* cost, CostSite site) : cost_(cost), site_(site), start_(cost ? monotonic_ns() : 0) {}
  ~ScopedCost() {
    if (cost_) cost_->add(site_, monotonic_ns() - start_);
  }
  ScopedCost(const ScopedCost&) = delete;
  ScopedCost& operator=(const ScopedCost&) = delete;

 private:
  SelfCost* cost_;
  CostSite site_;
  std::int64_t start_;
};

}  // namespace kernscope::tracer
