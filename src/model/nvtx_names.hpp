// NVTX range names as nsys's reports print them: "DOMAIN:TEXT", with an empty domain for the
// default one. Domain names come from the domain-creation events of the same process.
#pragma once

#include <string>
#include <unordered_map>

#include "kernscope/trace.hpp"

namespace kernscope {

class NvtxDomainNames {
 public:
  // Uses the domain-creation rows present in `nvtx` (after any filter, as nsys does).
  explicit NvtxDomainNames(const Trace& trace);
  // The domain's name, or kNoString when the range's domain has no creation event.
  StringId lookup(std::int64_t global_tid, std::int64_t domain_id) const;
  // "domain:text" for row `row` of the trace's NVTX columns.
  std::string range_label(const Trace& trace, RowIndex row) const;

 private:
  struct Key {
    std::int64_t process;
    std::int64_t domain;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::int64_t>()(k.process * 1000003 ^ k.domain);
    }
  };
  std::unordered_map<Key, StringId, KeyHash> names_;
};

}  // namespace kernscope
