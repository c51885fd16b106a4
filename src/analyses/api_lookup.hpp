// Finds the API call that launched a GPU operation: same correlation id, same process (nsys joins
// op.globalPid == api.globalTid & 0xFFFFFFFFFF000000). CUPTI numbers correlation ids densely per
// process, so each process gets a table indexed by id; a hash map covers sparse ids.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope::report {

class ApiLookup {
 public:
  explicit ApiLookup(const ApiCallColumns& api);
  std::optional<RowIndex> find(std::int64_t global_pid, std::uint32_t correlation_id) const;

 private:
  static constexpr RowIndex kNone = UINT32_MAX;
  struct Process {
    std::vector<RowIndex> dense;                       // by correlation id
    std::unordered_map<std::uint32_t, RowIndex> sparse;  // when ids are too sparse for `dense`
  };
  std::unordered_map<std::int64_t, Process> processes_;
  // The last process looked up: GPU operations come in long runs from one process.
  mutable std::int64_t last_key_ = -1;
  mutable const Process* last_ = nullptr;
};

}  // namespace kernscope::report
