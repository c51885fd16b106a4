// Finds the API calls that launched a GPU operation: same correlation id, same process (nsys joins
// op.globalPid == api.globalTid & 0xFFFFFFFFFF000000). CUPTI numbers correlation ids densely per
// process (with gaps: ids of untraced calls), so each process gets a rank index over its ids: one
// bit per id saying whether a traced call has it, a running count per 64 ids, and the rows in id
// order (about 4.2 bytes per call plus 0.19 per id, where a table by id took 4 bytes per id: 324 MB
// of the 1 GB export's 81 M ids). A hash map covers ids too sparse even for that.
//
// One id can name several API rows: nsys's --cudabacktrace stores each backtraced call twice, the
// backtrace record (cudaLaunchKernel) and, nested inside its time, the CUDA record itself
// (cudaLaunchKernel_v7000). nsys's report SQL joins every row (for_each_row); kernscope's own
// analyses count the call once (find gives the enclosing row, is_repeat marks the nested ones).
//
// Built once, it is only read: one lookup can serve analyses running on several threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope::report {

class ApiLookup {
 public:
  // Built over chunks of at least `min_rows_per_chunk` rows on several threads, one per core
  // (one chunk, and the one thread, for smaller tables). Tests pass small chunks and `cores` to
  // build a small table in several chunks on any machine. 256 k rows a chunk: the 4.1 M calls of a
  // 300 MB export take 16 cores (at 1 M they took 4), where the lookup holds report's first
  // analyses (the kernels' launches, the forward passes).
  explicit ApiLookup(const ApiCallColumns& api, std::size_t min_rows_per_chunk = std::size_t{1} << 18, std::size_t cores = 0);
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
  // `strings`: the trace's pool (the answers for every row are decided at the first call).
  bool is_repeat(RowIndex row, const StringPool& strings) const;

 private:
  static constexpr RowIndex kNone = UINT32_MAX;
  struct Process {
    // Rank index (when ids are dense enough): bit id % 64 of present[id / 64] is set when a call
    // has the id; its row is heads[before[id / 64] + set bits below it in that word].
    std::vector<std::uint64_t> present;
    std::vector<RowIndex> before;
    std::vector<RowIndex> heads;
    std::unordered_map<std::uint32_t, RowIndex> sparse;  // when ids are too sparse for the index
    bool indexed() const { return !present.empty(); }
    // Where the id's row is in `heads` (indexed processes), kNoRank when no call has the id.
    static constexpr std::size_t kNoRank = SIZE_MAX;
    std::size_t rank(std::uint32_t correlation_id) const;
    const RowIndex* head(std::uint32_t correlation_id) const;
  };
  const Process* process(std::int64_t global_pid) const;
  const ApiCallColumns& api_;
  std::unordered_map<std::int64_t, Process> processes_;
  // The only process, when there is one (most traces): found without hashing.
  std::int64_t single_key_ = -1;
  const Process* single_ = nullptr;
  // Rows that share an id with the found row (empty in most traces): found row -> the others.
  std::unordered_map<RowIndex, std::vector<RowIndex>> more_;
  // is_repeat per row, decided at its first call (only where more_ is not empty).
  mutable std::once_flag repeat_once_;
  mutable std::vector<bool> repeat_;
};

}  // namespace kernscope::report
