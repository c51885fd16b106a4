#include "tracer/self_cost.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>

namespace kernscope::tracer {

std::string_view cost_site_name(CostSite site) {
  switch (site) {
    case CostSite::kInit: return "init";
    case CostSite::kBufferRequest: return "buffer_request";
    case CostSite::kBufferComplete: return "buffer_complete";
    case CostSite::kNvtxCallback: return "nvtx_callback";
    case CostSite::kApiCallback: return "api_callback";
    case CostSite::kFinish: return "finish";
    case CostSite::kCount: break;
  }
  return "unknown";
}

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::uint64_t SelfCost::next_id() {
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}

SelfCost::PerThread& SelfCost::mine() {
  // One slot per (SelfCost, thread); a thread meets one SelfCost in the tracer, tests may make
  // several, hence the owner check.
  thread_local PerThread* slot = nullptr;
  thread_local std::uint64_t owner = 0;
  if (slot && owner == id_) return *slot;
  auto fresh = std::make_unique<PerThread>();
  fresh->tid = static_cast<std::uint32_t>(gettid());
  std::lock_guard lock(mutex_);
  for (auto& t : threads_) {
    if (t->tid == fresh->tid) {  // the same thread again after another SelfCost used the slot
      slot = t.get();
      owner = id_;
      return *slot;
    }
  }
  threads_.push_back(std::move(fresh));
  slot = threads_.back().get();
  owner = id_;
  return *slot;
}

void SelfCost::add(CostSite site, std::int64_t ns) {
  PerThread& t = mine();
  const auto i = static_cast<std::size_t>(site);
  t.calls[i].fetch_add(1, std::memory_order_relaxed);
  t.ns[i].fetch_add(ns, std::memory_order_relaxed);
}

std::vector<SelfCostRow> SelfCost::rows() const {
  std::vector<SelfCostRow> out;
  std::lock_guard lock(mutex_);
  for (const auto& t : threads_) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(CostSite::kCount); ++i) {
      const auto calls = t->calls[i].load(std::memory_order_relaxed);
      if (calls > 0) out.push_back({t->tid, static_cast<CostSite>(i), calls, t->ns[i].load(std::memory_order_relaxed)});
    }
  }
  std::sort(out.begin(), out.end(), [](const SelfCostRow& a, const SelfCostRow& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.site < b.site;
  });
  return out;
}

double SelfCost::timing_cost_ns(int samples) {
  // What one ScopedCost adds to the scope it times: the second clock read and the counter update
  // fall inside the measured span of the outer pair here, as they fall inside the callback's time.
  SelfCost probe;
  std::vector<std::int64_t> spans;
  spans.reserve(static_cast<std::size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    const std::int64_t begin = monotonic_ns();
    { ScopedCost timed(&probe, CostSite::kInit); }
    spans.push_back(monotonic_ns() - begin);
  }
  std::nth_element(spans.begin(), spans.begin() + samples / 2, spans.end());
  return static_cast<double>(spans[static_cast<std::size_t>(samples / 2)]);
}

}  // namespace kernscope::tracer
