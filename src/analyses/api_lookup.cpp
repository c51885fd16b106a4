#include "analyses/api_lookup.hpp"

namespace kernscope::report {

ApiLookup::ApiLookup(const ApiCallColumns& api) {
  rows_.reserve(api.size());
  for (RowIndex i = 0; i < api.size(); ++i) {
    rows_.try_emplace(Key{process_key(api.global_tid[i]), api.correlation_id[i]}, i);
  }
}

std::optional<RowIndex> ApiLookup::find(std::int64_t global_pid, std::uint32_t correlation_id) const {
  auto it = rows_.find(Key{global_pid, correlation_id});
  if (it == rows_.end()) return std::nullopt;
  return it->second;
}

}  // namespace kernscope::report
