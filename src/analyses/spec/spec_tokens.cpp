#include "analyses/spec/spec_tokens.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <tuple>

#include "analyses/work/shape_flops.hpp"

namespace kernscope::spec {
namespace {

std::int64_t integer_of(const std::string& s) {
  std::int64_t v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() ? v : -1;
}

constexpr std::string_view kSlice = "aten::slice", kCat = "aten::cat", kEmbedding = "aten::embedding";

}  // namespace

HfVerifyTokens::HfVerifyTokens(const Trace& trace) : trace_(trace) {
  const auto& o = trace.op_shapes;
  for (RowIndex i = 0; i < o.size(); ++i) {
    const std::string_view name = trace.strings.get(o.name[i]);
    if (name == kSlice || name == kCat || name == kEmbedding) rows_.push_back(i);
  }
  std::sort(rows_.begin(), rows_.end(), [&](RowIndex a, RowIndex b) {
    return std::tie(o.global_tid[a], o.start_ns[a]) < std::tie(o.global_tid[b], o.start_ns[b]);
  });
}

VerifyTokens HfVerifyTokens::read(std::int64_t thread, TimeNs lo, TimeNs hi) const {
  VerifyTokens out;
  const auto& o = trace_.op_shapes;
  auto it = std::lower_bound(rows_.begin(), rows_.end(), std::make_pair(thread, lo), [&](RowIndex a, const std::pair<std::int64_t, TimeNs>& key) {
    return std::tie(o.global_tid[a], o.start_ns[a]) < std::tie(key.first, key.second);
  });
  // The candidates' slice: [B, N] on dim 1 from S to the end (INT64_MAX); the next cat of [B, S]
  // and [B, E] on the last dim closes the pair.
  std::int64_t slice_start = -1, slice_length = -1;
  for (; it != rows_.end() && o.global_tid[*it] == thread && o.start_ns[*it] < hi; ++it) {
    const std::string_view name = trace_.strings.get(o.name[*it]);
    const auto dims = shapes::parse_arg_shapes(trace_.strings.get(o.input_dims[*it]));
    if (!dims || dims->empty()) continue;
    if (name == kEmbedding) {
      // The target's verify forward is the window's first (the draft ran before the window).
      if (out.positions < 0 && dims->size() >= 2 && (*dims)[1].dims.size() == 2) out.positions = (*dims)[1].dims[1];
      continue;
    }
    if (name == kSlice) {
      const auto& d = (*dims)[0].dims;
      const auto values = shapes::parse_string_list(trace_.strings.get(o.concrete_inputs[*it]));
      if (d.size() != 2 || !values || values->size() < 4) continue;
      const std::int64_t dim = integer_of((*values)[1]), start = integer_of((*values)[2]);
      if (dim != 1 || start < 0 || start > d[1] || (*values)[3] != "9223372036854775807") continue;
      slice_start = start;
      slice_length = d[1];
      continue;
    }
    // aten::cat: a list of two [B, L] tensors, the first exactly the slice's start long.
    if (slice_start < 0 || !(*dims)[0].is_list || (*dims)[0].list.size() != 2) continue;
    const auto& a = (*dims)[0].list[0];
    const auto& b = (*dims)[0].list[1];
    if (a.size() != 2 || b.size() != 2 || a[0] != b[0] || a[1] != slice_start) continue;
    out.proposed = slice_length - slice_start;
    out.emitted = b[1];
  }
  return out;
}

}  // namespace kernscope::spec
