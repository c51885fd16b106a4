#include "analyses/api_lookup.hpp"

#include <algorithm>
#include <bit>

#include "kernscope/api_roles.hpp"

namespace kernscope::report {
namespace {

bool encloses(const ApiCallColumns& a, RowIndex outer, RowIndex inner) {
  return a.start_ns[outer] <= a.start_ns[inner] && a.end_ns[inner] <= a.end_ns[outer];
}

}  // namespace

std::size_t ApiLookup::Process::rank(std::uint32_t correlation_id) const {
  const std::size_t word = correlation_id / 64;
  if (word >= present.size()) return kNoRank;
  const std::uint64_t bit = std::uint64_t{1} << (correlation_id % 64);
  if (!(present[word] & bit)) return kNoRank;
  return before[word] + static_cast<std::size_t>(std::popcount(present[word] & (bit - 1)));
}

const RowIndex* ApiLookup::Process::head(std::uint32_t correlation_id) const {
  if (!indexed()) {
    auto it = sparse.find(correlation_id);
    return it == sparse.end() ? nullptr : &it->second;
  }
  const std::size_t r = rank(correlation_id);
  return r == kNoRank ? nullptr : &heads[r];
}

ApiLookup::ApiLookup(const ApiCallColumns& api) : api_(api) {
  // Rows come in long runs of one process: look its entry up once per run.
  std::int64_t last_key = -1;
  Process* last = nullptr;
  auto process_of = [&](RowIndex i) -> Process& {
    const std::int64_t key = process_key(api.global_tid[i]);
    if (key != last_key || !last) {
      last_key = key;
      last = &processes_[key];
    }
    return *last;
  };
  std::unordered_map<const Process*, std::pair<std::uint32_t, std::size_t>> extent;  // max id, calls
  for (RowIndex i = 0; i < api.size(); ++i) {
    auto& e = extent[&process_of(i)];
    e.first = std::max(e.first, api.correlation_id[i]);
    ++e.second;
  }
  for (auto& [key, p] : processes_) {
    const auto& e = extent[&p];
    // Indexed when the ids span at most 256 per traced call (the index then costs at most ~48
    // bytes a call, a hash-map node about as much). CUPTI shares ids with untraced calls; the
    // llama export has ~6 ids per traced call.
    if (static_cast<std::size_t>(e.first) + 1 <= 256 * e.second + (std::size_t{1} << 22)) {
      p.present.assign(static_cast<std::size_t>(e.first) / 64 + 1, 0);
    }
  }
  last = nullptr;
  for (RowIndex i = 0; i < api.size(); ++i) {
    auto& p = process_of(i);
    if (p.indexed()) p.present[api.correlation_id[i] / 64] |= std::uint64_t{1} << (api.correlation_id[i] % 64);
  }
  for (auto& [key, p] : processes_) {
    if (!p.indexed()) continue;
    p.before.resize(p.present.size());
    RowIndex running = 0;
    for (std::size_t w = 0; w < p.present.size(); ++w) {
      p.before[w] = running;
      running += static_cast<RowIndex>(std::popcount(p.present[w]));
    }
    p.heads.assign(running, kNone);
  }
  if (processes_.size() == 1) {
    single_key_ = processes_.begin()->first;
    single_ = &processes_.begin()->second;
  }
  last = nullptr;
  for (RowIndex i = 0; i < api.size(); ++i) {
    auto& p = process_of(i);
    const std::uint32_t id = api.correlation_id[i];
    RowIndex& head = p.indexed() ? p.heads[p.rank(id)] : p.sparse.try_emplace(id, kNone).first->second;
    if (head == kNone) {
      head = i;
      continue;
    }
    // Id 0 is "none" (CUPTI numbers from 1; the Kineto reader writes 0 for a missing id): rows
    // without an id are not one call, and joining them all would multiply GPU ops by their number.
    if (id == 0) continue;
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

const ApiLookup::Process* ApiLookup::process(std::int64_t global_pid) const {
  if (single_) return global_pid == single_key_ ? single_ : nullptr;
  auto it = processes_.find(global_pid);
  return it == processes_.end() ? nullptr : &it->second;
}

std::optional<RowIndex> ApiLookup::find(std::int64_t global_pid, std::uint32_t correlation_id) const {
  const Process* p = process(global_pid);
  if (!p) return std::nullopt;
  const RowIndex* head = p->head(correlation_id);
  if (!head || *head == kNone) return std::nullopt;
  return *head;
}

bool ApiLookup::is_repeat(RowIndex row, const StringPool& strings) const {
  if (more_.empty()) return false;
  const auto head = find(process_key(api_.global_tid[row]), api_.correlation_id[row]);
  if (!head || *head == row) return false;
  return api_.global_tid[*head] == api_.global_tid[row] && encloses(api_, *head, row) &&
         api_base_name(strings.get(api_.name[*head])) == api_base_name(strings.get(api_.name[row]));
}

}  // namespace kernscope::report
