#include "analyses/api_lookup.hpp"

#include <algorithm>

namespace kernscope::report {

ApiLookup::ApiLookup(const ApiCallColumns& api) {
  std::unordered_map<std::int64_t, std::pair<std::uint32_t, std::size_t>> extent;  // max id, calls
  for (RowIndex i = 0; i < api.size(); ++i) {
    auto& e = extent[process_key(api.global_tid[i])];
    e.first = std::max(e.first, api.correlation_id[i]);
    ++e.second;
  }
  for (const auto& [key, e] : extent) {
    auto& p = processes_[key];
    // Dense when the table holds at most 16 ids per traced call: 4 bytes an id is less than one
    // hash-map node (~40 bytes). CUPTI shares ids with untraced calls; the llama export has ~6.
    if (static_cast<std::size_t>(e.first) + 1 <= 16 * e.second + (1u << 20)) {
      p.dense.assign(static_cast<std::size_t>(e.first) + 1, kNone);
    }
  }
  for (RowIndex i = 0; i < api.size(); ++i) {
    auto& p = processes_[process_key(api.global_tid[i])];
    const auto id = api.correlation_id[i];
    if (!p.dense.empty()) {
      if (p.dense[id] == kNone) p.dense[id] = i;  // the first call with the id, as before
    } else {
      p.sparse.try_emplace(id, i);
    }
  }
}

std::optional<RowIndex> ApiLookup::find(std::int64_t global_pid, std::uint32_t correlation_id) const {
  if (global_pid != last_key_) {
    auto it = processes_.find(global_pid);
    last_key_ = global_pid;
    last_ = it == processes_.end() ? nullptr : &it->second;
  }
  if (!last_) return std::nullopt;
  if (!last_->dense.empty()) {
    if (correlation_id >= last_->dense.size() || last_->dense[correlation_id] == kNone) return std::nullopt;
    return last_->dense[correlation_id];
  }
  auto it = last_->sparse.find(correlation_id);
  if (it == last_->sparse.end()) return std::nullopt;
  return it->second;
}

}  // namespace kernscope::report
