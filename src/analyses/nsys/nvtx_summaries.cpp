// nvtx_sum, nvtx_pushpop_sum and nvtx_startend_sum: range durations per "domain:text" name. An
// unclosed range lasts until the last NVTX timestamp, as in nsys.
#include <algorithm>
#include <limits>
#include <map>

#include "analyses/nsys/nvtx_reports.hpp"
#include "analyses/nsys/summary_builder.hpp"
#include "model/nvtx_names.hpp"

namespace kernscope::report {
namespace {

enum class Styles { kAll, kPushPop, kStartEnd };

Result<Table> range_summary(const Trace& trace, Styles styles, SummarySpec spec) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kNvtx)) return std::unexpected(no_data(trace, "NV Tools Extension (NVTX) data"));
  const auto& n = trace.nvtx;
  TimeNs last = std::numeric_limits<TimeNs>::min();  // max(max(start), max(end)) over all rows
  for (RowIndex i = 0; i < n.size(); ++i) {
    last = std::max(last, n.start_ns[i]);
    if (n.end_ns[i] != kNoTime) last = std::max(last, n.end_ns[i]);
  }
  const NvtxDomainNames domains(trace);
  std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>> groups;  // (name, style)
  for (RowIndex i = 0; i < n.size(); ++i) {
    const auto type = n.event_type[i];
    if (!is_nvtx_range(type)) continue;
    const bool pushpop = is_nvtx_pushpop(type);
    if ((styles == Styles::kPushPop && !pushpop) || (styles == Styles::kStartEnd && pushpop)) continue;
    const TimeNs end = n.end_ns[i] == kNoTime ? last : n.end_ns[i];
    const std::string style = styles == Styles::kAll ? (pushpop ? "PushPop" : "StartEnd") : "";
    groups[{domains.range_label(trace, i), style}].push_back(end - n.start_ns[i]);
  }
  std::vector<SummaryGroup> out;
  out.reserve(groups.size());
  for (auto& [key, samples] : groups) {
    std::vector<Cell> trailing;
    if (styles == Styles::kAll) trailing.emplace_back(key.second);
    trailing.emplace_back(key.first);
    out.push_back({std::move(samples), std::move(trailing), {}});
  }
  return build_summary(spec, std::move(out));
}

}  // namespace

Result<Table> nvtx_sum(const Trace& trace, const ReportRequest&) {
  return range_summary(trace, Styles::kAll,
                       {"nvtx_sum", "NVTX Range Summary", "Instances", {{"Style"}, {"Range"}}});
}

Result<Table> nvtx_pushpop_sum(const Trace& trace, const ReportRequest&) {
  return range_summary(trace, Styles::kPushPop,
                       {"nvtx_pushpop_sum", "NVTX Push/Pop Range Summary", "Instances", {{"Range"}}});
}

Result<Table> nvtx_startend_sum(const Trace& trace, const ReportRequest&) {
  return range_summary(trace, Styles::kStartEnd,
                       {"nvtx_startend_sum", "NVTX Start/End Range Summary", "Instances", {{"Range"}}});
}

}  // namespace kernscope::report
