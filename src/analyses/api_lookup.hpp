// Finds the API call that launched a GPU operation: same correlation id, same process (nsys joins
// op.globalPid == api.globalTid & 0xFFFFFFFFFF000000).
#pragma once

#include <optional>
#include <unordered_map>

#include "kernscope/trace.hpp"

namespace kernscope::report {

class ApiLookup {
 public:
  explicit ApiLookup(const ApiCallColumns& api);
  std::optional<RowIndex> find(std::int64_t global_pid, std::uint32_t correlation_id) const;

 private:
  struct Key {
    std::int64_t process;
    std::uint32_t correlation;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::int64_t>()(k.process ^ (static_cast<std::int64_t>(k.correlation) << 1));
    }
  };
  std::unordered_map<Key, RowIndex, KeyHash> rows_;
};

}  // namespace kernscope::report
