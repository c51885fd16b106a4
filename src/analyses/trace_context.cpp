#include "analyses/trace_context.hpp"

#include <algorithm>

#include "base/parallel_chunks.hpp"

namespace kernscope {

const report::ApiLookup& TraceContext::api_lookup() const {
  std::call_once(lookup_once_, [&] { lookup_ = std::make_unique<report::ApiLookup>(trace_.api_calls); });
  return *lookup_;
}

const std::vector<RowIndex>& TraceContext::build_kernel_launches() const {
  std::call_once(launches_once_, [&] {
    const auto& k = trace_.kernels;
    const report::ApiLookup& lookup = api_lookup();
    kernel_launches_.assign(k.size(), kNoLaunch);
    if (k.correlation_id.size() < k.size()) return;  // a reader that keeps no correlation ids
    ChunkPlan(k.size(), std::size_t{1} << 18).run([&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        if (const auto r = lookup.find(k.global_pid[i], k.correlation_id[i])) kernel_launches_[i] = *r;
      }
    });
  });
  launches_ready_.store(true, std::memory_order_release);
  return kernel_launches_;
}

const TraceContext::Classes& TraceContext::build_classes() const {
  std::call_once(classes_once_, [&] {
    constexpr std::uint32_t kUnset = UINT32_MAX;
    // By StringId, with one extra slot after the pool's ids for kernels without a name.
    classes_.slot_class.assign(trace_.strings.size() + 1, kUnset);
    for (const StringId id : trace_.kernels.demangled_name) {
      auto& slot = classes_.slot_class[id == kNoString ? trace_.strings.size() : id];
      if (slot != kUnset) continue;
      auto [op_class, rule] = rules_.classify(trace_.strings.get(id));
      slot = static_cast<std::uint32_t>(classes_.classes.size());
      auto known = std::find(classes_.class_names.begin(), classes_.class_names.end(), op_class);
      if (known == classes_.class_names.end()) known = classes_.class_names.insert(known, op_class);
      classes_.class_id.push_back(static_cast<std::uint32_t>(known - classes_.class_names.begin()));
      classes_.classes.push_back({std::move(op_class), rule});
    }
  });
  classes_ready_.store(true, std::memory_order_release);
  return classes_;
}

}  // namespace kernscope

namespace kernscope {

const Result<report::StepWindows>& TraceContext::step_windows(const StepOptions& options) const {
  std::lock_guard lock(windows_mutex_);
  for (const auto& [key, found] : windows_) {
    if (key == options.step_range) return *found;
  }
  windows_.emplace_back(options.step_range, std::make_unique<Result<report::StepWindows>>(report::find_step_windows_uncached(*this, options)));
  return *windows_.back().second;
}

}  // namespace kernscope
