#include "analyses/api_lookup.hpp"

#include <algorithm>

#include "kernscope/api_roles.hpp"

namespace kernscope::report {
namespace {

bool encloses(const ApiCallColumns& a, RowIndex outer, RowIndex inner) {
  return a.start_ns[outer] <= a.start_ns[inner] && a.end_ns[inner] <= a.end_ns[outer];
}

}  // namespace

ApiLookup::ApiLookup(const ApiCallColumns& api) : api_(api) {
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
    RowIndex& head = *slot(process_key(api.global_tid[i]), api.correlation_id[i]);
    if (head == kNone) {
      head = i;
      continue;
    }
    // Id 0 is "none" (CUPTI numbers from 1; the Kineto reader writes 0 for a missing id): rows
    // without an id are not one call, and joining them all would multiply GPU ops by their number.
    if (api.correlation_id[i] == 0) continue;
    // A second row with the id: the enclosing one (the outer call) becomes the found row.
    if (encloses(api, i, head) && !encloses(api, head, i)) {
      auto node = more_.extract(head);
      auto& others = more_[i];
      others.push_back(head);
      if (!node.empty()) others.insert(others.end(), node.mapped().begin(), node.mapped().end());
      std::sort(others.begin(), others.end());
      head = i;
    } else {
      more_[head].push_back(i);
    }
  }
}

RowIndex* ApiLookup::slot(std::int64_t process, std::uint32_t correlation_id) {
  auto& p = processes_[process];
  if (!p.dense.empty()) return &p.dense[correlation_id];
  return &p.sparse.try_emplace(correlation_id, kNone).first->second;
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

bool ApiLookup::is_repeat(RowIndex row, const StringPool& strings) const {
  if (more_.empty()) return false;
  const auto head = find(process_key(api_.global_tid[row]), api_.correlation_id[row]);
  if (!head || *head == row) return false;
  return api_.global_tid[*head] == api_.global_tid[row] && encloses(api_, *head, row) &&
         api_base_name(strings.get(api_.name[*head])) == api_base_name(strings.get(api_.name[row]));
}

}  // namespace kernscope::report
