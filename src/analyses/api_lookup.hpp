// Finds the API calls that launched a GPU operation: same correlation id, same process (nsys joins
// op.globalPid == api.globalTid & 0xFFFFFFFFFF000000). CUPTI numbers correlation ids densely per
// process, so each process gets a table indexed by id; a hash map covers sparse ids.
//
// One id can name several API rows: nsys's --cudabacktrace stores each backtraced call twice, the
// backtrace record (cudaLaunchKernel) and, nested inside its time, the CUDA record itself
// (cudaLaunchKernel_v7000). nsys's report SQL joins every row (for_each_row); kernscope's own
// analyses count the call once (find gives the enclosing row, is_repeat marks the nested ones).
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope::report {

class ApiLookup {
 public:
  explicit ApiLookup(const ApiCallColumns& api);
  // The call with this id: where several rows share it, the one whose time encloses the others
  // (ties: the first row).
  std::optional<RowIndex> find(std::int64_t global_pid, std::uint32_t correlation_id) const;
  // Every row with this id, the found one first, then the others in row order: SQL's join
  // (id 0, no id, gives the found row only).
  template <class F>
  void for_each_row(std::int64_t global_pid, std::uint32_t correlation_id, F&& f) const {
    const auto head = find(global_pid, correlation_id);
    if (!head) return;
    f(*head);
    if (auto it = more_.find(*head); it != more_.end()) {
      for (RowIndex r : it->second) f(r);
    }
  }
  // Whether `row` repeats another row's call rather than being a call of its own: it shares the
  // process, thread and correlation id of the found row, lies inside its time, and names the same
  // API up to the version suffix (api_base_name). nsys's backtrace pairs are the case met so far.
  bool is_repeat(RowIndex row, const StringPool& strings) const;

 private:
  static constexpr RowIndex kNone = UINT32_MAX;
  struct Process {
    std::vector<RowIndex> dense;                       // by correlation id
    std::unordered_map<std::uint32_t, RowIndex> sparse;  // when ids are too sparse for `dense`
  };
  RowIndex* slot(std::int64_t process, std::uint32_t correlation_id);
  const ApiCallColumns& api_;
  std::unordered_map<std::int64_t, Process> processes_;
  // Rows that share an id with the found row (empty in most traces): found row -> the others.
  std::unordered_map<RowIndex, std::vector<RowIndex>> more_;
  // The last process looked up: GPU operations come in long runs from one process.
  mutable std::int64_t last_key_ = -1;
  mutable const Process* last_ = nullptr;
};

}  // namespace kernscope::report
