#include "analyses/trace_context.hpp"

#include <algorithm>

#include "base/parallel_chunks.hpp"
#include "model/api_roles.hpp"

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

const std::map<std::int64_t, std::int64_t>& TraceContext::launch_calls_per_thread() const {
  std::call_once(per_thread_once_, [&] {
    const report::ApiLookup& lookup = api_lookup();  // a backtraced launch is two rows: counted once
    const auto& api = trace_.api_calls;
    // Whether each name launches, decided once before the chunks share it (a role cache per chunk
    // would hold a slot per string of the pool on every thread).
    const NamesWithRole launches_by_name(api, trace_.strings, kAnyLaunch);
    const ChunkPlan plan(api.size(), std::size_t{1} << 18);
    std::vector<std::map<std::int64_t, std::int64_t>> per_chunk(plan.count());
    plan.run([&](std::size_t chunk, std::size_t begin, std::size_t end) {
      auto& counts = per_chunk[chunk];
      // Calls come thread by thread: the count of the current run's thread is found once per run.
      std::int64_t run_tid = 0;
      std::int64_t* run_count = nullptr;
      for (std::size_t i = begin; i < end; ++i) {
        const auto row = static_cast<RowIndex>(i);
        if (!launches_by_name(api.name[row]) || lookup.is_repeat(row, trace_.strings)) continue;
        if (!run_count || api.global_tid[row] != run_tid) {
          run_tid = api.global_tid[row];
          run_count = &counts[run_tid];
        }
        ++*run_count;
      }
    });
    for (const auto& counts : per_chunk) {
      for (const auto& [tid, n] : counts) launch_calls_per_thread_[tid] += n;
    }
  });
  return launch_calls_per_thread_;
}

void TraceContext::build_launch_facts() const {
  (void)kernel_launches();
  if (trace_.host.samples.size() > 0) (void)launch_calls_per_thread();
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
