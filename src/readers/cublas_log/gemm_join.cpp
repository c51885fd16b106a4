#include "readers/cublas_log/gemm_join.hpp"

#include <algorithm>
#include <map>

namespace kernscope::readers::cublas_log {
namespace {

// Groups of items in order of their first appearance, keyed by `key`.
template <class Key>
struct Groups {
  std::vector<Key> keys;
  std::vector<std::vector<std::size_t>> members;
  void add(const Key& key, std::size_t item) {
    const auto it = std::ranges::find(keys, key);
    if (it == keys.end()) {
      keys.push_back(key);
      members.push_back({item});
    } else {
      members[static_cast<std::size_t>(it - keys.begin())].push_back(item);
    }
  }
};

}  // namespace

GemmJoin join_gemm_calls(const GemmLog& log, const Trace& trace, const std::vector<RowIndex>& gemm_rows) {
  GemmJoin join;
  join.trace_row.assign(log.calls.size(), std::nullopt);
  const KernelColumns& kc = trace.kernels;
  std::vector<RowIndex> rows = gemm_rows;
  std::ranges::stable_sort(rows, [&](RowIndex a, RowIndex b) { return kc.start_ns[a] < kc.start_ns[b]; });

  Groups<std::pair<std::int64_t, std::string>> calls;
  for (std::size_t i = 0; i < log.calls.size(); ++i) calls.add({log.calls[i].process_id, log.calls[i].stream}, i);
  Groups<std::pair<std::int64_t, std::uint32_t>> kernels;
  for (std::size_t i = 0; i < rows.size(); ++i) kernels.add({kc.global_pid[rows[i]], kc.stream_id[rows[i]]}, i);

  if (calls.keys.size() != kernels.keys.size()) {
    join.notes.push_back({"log_streams_differ", NoteSeverity::kInfo,
                          "cublas-log: the log uses " + std::to_string(calls.keys.size()) + " stream(s), the trace has GEMM kernels on " +
                              std::to_string(kernels.keys.size()) + ": streams paired in order of first use"});
  }
  const std::size_t pairs = std::min(calls.keys.size(), kernels.keys.size());
  for (std::size_t g = 0; g < pairs; ++g) {
    const auto& call_items = calls.members[g];
    const auto& kernel_items = kernels.members[g];
    if (call_items.size() != kernel_items.size()) {
      const std::size_t surplus = std::max(call_items.size(), kernel_items.size()) - std::min(call_items.size(), kernel_items.size());
      join.notes.push_back({"gemm_counts_differ", NoteSeverity::kInfo,
                            "cublas-log: stream " + calls.keys[g].second + " of process " + std::to_string(calls.keys[g].first) +
                                " has " + std::to_string(call_items.size()) + " GEMM call(s) in the log and " +
                                std::to_string(kernel_items.size()) + " GEMM kernel(s) on trace stream " +
                                std::to_string(kernels.keys[g].second) + ": paired in order, the surplus left without shapes "
                                                                         "(log and trace from different runs, or split-K kernels?)",
                            static_cast<std::int64_t>(surplus)});
    }
    const std::size_t n = std::min(call_items.size(), kernel_items.size());
    for (std::size_t i = 0; i < n; ++i) {
      join.trace_row[call_items[i]] = rows[kernel_items[i]];
      ++join.matched;
    }
  }
  return join;
}

}  // namespace kernscope::readers::cublas_log
