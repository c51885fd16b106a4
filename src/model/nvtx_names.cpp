#include "model/nvtx_names.hpp"

namespace kernscope {
namespace {
// nsys joins a range to its domain on domainId and on the process bits of globalTid only
// (mask 0x0000FFFFFF000000), ignoring the hardware/VM bits.
std::int64_t process_bits(std::int64_t global_tid) { return global_tid & 0x0000FFFFFF000000LL; }
}  // namespace

NvtxDomainNames::NvtxDomainNames(const Trace& trace) {
  const auto& n = trace.nvtx;
  std::unordered_map<Key, TimeNs, KeyHash> first_seen;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (n.event_type[i] != kNvtxDomainCreate) continue;
    const Key key{process_bits(n.global_tid[i]), n.domain_id[i]};
    auto it = first_seen.find(key);
    if (it == first_seen.end() || n.start_ns[i] < it->second) {
      first_seen[key] = n.start_ns[i];
      names_[key] = n.text[i];
    }
  }
}

StringId NvtxDomainNames::lookup(std::int64_t global_tid, std::int64_t domain_id) const {
  auto it = names_.find(Key{process_bits(global_tid), domain_id});
  return it == names_.end() ? kNoString : it->second;
}

std::string NvtxDomainNames::range_label(const Trace& trace, RowIndex row) const {
  const auto& n = trace.nvtx;
  std::string label(trace.strings.get(lookup(n.global_tid[row], n.domain_id[row])));
  label += ':';
  label += trace.strings.get(n.text[row]);
  return label;
}

}  // namespace kernscope
