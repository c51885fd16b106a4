// cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_api_gpu_sum
// and osrt_sum: per-name summaries of durations (or sizes), as nsys 2025.3's scripts compute them.
#include "analyses/nsys/cuda_summaries.hpp"

#include <algorithm>
#include <map>

#include "analyses/nsys/summary_builder.hpp"

namespace kernscope::report {
namespace {

Cell name_cell(const Trace& trace, StringId id) {
  if (id == kNoString) return std::monostate{};
  return std::string(trace.strings.get(id));
}

// Samples grouped by name string, in ascending name order (SQLite's GROUP BY order).
using ByName = std::map<std::string, std::vector<std::int64_t>>;

std::vector<SummaryGroup> groups_from(ByName& by_name) {
  std::vector<SummaryGroup> groups;
  groups.reserve(by_name.size());
  for (auto& [name, samples] : by_name) {
    groups.push_back({std::move(samples), {Cell(name)}, name});
  }
  return groups;
}

// Memory operations by name: memcpy by copy direction (dropping kinds without a label, as nsys's
// inner join does), memset as one group. `value` picks duration or size.
template <class MemcpyValue, class MemsetValue>
ByName memops_by_name(const Trace& trace, MemcpyValue&& value_of_memcpy, MemsetValue&& value_of_memset) {
  ByName by_name;
  const auto& m = trace.memcpys;
  std::map<std::int32_t, std::string> names;
  for (RowIndex i = 0; i < m.size(); ++i) {
    auto it = names.find(m.copy_kind[i]);
    if (it == names.end()) it = names.emplace(m.copy_kind[i], memcpy_name(trace, m.copy_kind[i])).first;
    if (it->second.empty()) continue;
    by_name[it->second].push_back(value_of_memcpy(i));
  }
  const auto& s = trace.memsets;
  if (s.size() > 0) {
    auto& samples = by_name[std::string(kMemsetName)];
    for (RowIndex i = 0; i < s.size(); ++i) samples.push_back(value_of_memset(i));
  }
  return by_name;
}

}  // namespace

Result<Table> cuda_gpu_kern_sum(const Trace& trace, const ReportRequest& request) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kKernels)) return std::unexpected(no_data(trace, "CUDA kernel data"));
  const auto& k = trace.kernels;
  std::unordered_map<StringId, std::vector<std::int64_t>> by_id;
  for (RowIndex i = 0; i < k.size(); ++i) {
    by_id[kernel_name(trace, i, request.kernel_names)].push_back(k.end_ns[i] - k.start_ns[i]);
  }
  std::vector<SummaryGroup> groups;
  groups.reserve(by_id.size());
  for (auto& [id, samples] : by_id) {
    groups.push_back({std::move(samples), {name_cell(trace, id)}, std::string(trace.strings.get(id))});
  }
  return build_summary({"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", "Instances",
                        {{"Name"}}, SummaryOrder::kTotalDescCountName},
                       std::move(groups));
}

Result<Table> cuda_api_sum(const Trace& trace, const ReportRequest&) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kApiCalls)) return std::unexpected(no_data(trace, "CUDA trace data"));
  const auto& a = trace.api_calls;
  // GROUP BY nameId: pool ids follow the export's StringIds order, so sorting by id keeps
  // SQLite's group order for ties.
  std::map<StringId, std::vector<std::int64_t>> by_id;
  for (RowIndex i = 0; i < a.size(); ++i) by_id[a.name[i]].push_back(a.end_ns[i] - a.start_ns[i]);
  std::vector<SummaryGroup> groups;
  for (auto& [id, samples] : by_id) {
    Cell name = id == kNoString ? Cell{} : Cell{std::string(api_display_name(trace.strings.get(id)))};
    groups.push_back({std::move(samples), {std::move(name)}, {}});
  }
  return build_summary({"cuda_api_sum", "CUDA API Summary", "Num Calls", {{"Name"}}}, std::move(groups));
}

Result<Table> osrt_sum(const Trace& trace, const ReportRequest&) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kOsrt)) return std::unexpected(no_data(trace, "OS Runtime trace data"));
  const auto& o = trace.osrt;
  constexpr std::int32_t kOsrtCallClass = 27;  // eventClass of OS runtime calls
  std::map<StringId, std::vector<std::int64_t>> by_id;
  for (RowIndex i = 0; i < o.size(); ++i) {
    if (o.event_class[i] == kOsrtCallClass) by_id[o.name[i]].push_back(o.end_ns[i] - o.start_ns[i]);
  }
  std::vector<SummaryGroup> groups;
  for (auto& [id, samples] : by_id) groups.push_back({std::move(samples), {name_cell(trace, id)}, {}});
  return build_summary({"osrt_sum", "OS Runtime Summary", "Num Calls", {{"Name"}}}, std::move(groups));
}

Result<Table> cuda_gpu_mem_time_sum(const Trace& trace, const ReportRequest&) {
  if (!trace.has(EventKind::kMemcpy) && !trace.has(EventKind::kMemset)) {
    return std::unexpected(no_data(trace, "GPU memory data"));
  }
  auto by_name = memops_by_name(
      trace, [&](RowIndex i) { return trace.memcpys.end_ns[i] - trace.memcpys.start_ns[i]; },
      [&](RowIndex i) { return trace.memsets.end_ns[i] - trace.memsets.start_ns[i]; });
  return build_summary({"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", "Count",
                        {{"Operation"}}},
                       groups_from(by_name));
}

Result<Table> cuda_gpu_mem_size_sum(const Trace& trace, const ReportRequest&) {
  if (!trace.has(EventKind::kMemcpy) && !trace.has(EventKind::kMemset)) {
    return std::unexpected(no_data(trace, "GPU memory data"));
  }
  auto by_name = memops_by_name(trace, [&](RowIndex i) { return trace.memcpys.bytes[i]; },
                                [&](RowIndex i) { return trace.memsets.bytes[i]; });
  struct Computed {
    SampleStats stats;
    std::string name;
  };
  std::vector<Computed> rows;
  for (auto& [name, samples] : by_name) {
    if (auto stats = compute_stats(samples)) rows.push_back(Computed{*stats, name});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Computed& a, const Computed& b) { return a.stats.sum > b.stats.sum; });
  Table table;
  table.report = "cuda_gpu_mem_size_sum";
  table.title = "CUDA GPU MemOps Summary (by Size)";
  // Unlike the time summaries, nsys leaves these statistics unrounded (shown in MB).
  table.columns = {{"Total", Unit::kBytes}, {"Count"},          {"Avg", Unit::kBytes},
                   {"Med", Unit::kBytes},   {"Min", Unit::kBytes}, {"Max", Unit::kBytes},
                   {"StdDev", Unit::kBytes}, {"Operation"}};
  for (auto& r : rows) {
    table.rows.push_back({r.stats.sum, r.stats.count, r.stats.mean, r.stats.median, r.stats.min,
                          r.stats.max, r.stats.stdev, r.name});
  }
  return table;
}

Result<Table> cuda_api_gpu_sum(const Trace& trace, const ReportRequest& request) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kApiCalls) && !trace.has(EventKind::kKernels) &&
      !trace.has(EventKind::kMemcpy) && !trace.has(EventKind::kMemset)) {
    return std::unexpected(no_data(trace, "CUDA API, GPU kernel, nor memory operations data"));
  }
  // GROUP BY name only: the category shown is that of the group's last row in the UNION ALL
  // (API, then kernels, then memory operations), as SQLite picks bare columns.
  struct Entry {
    std::vector<std::int64_t> samples;
    std::string category;
  };
  std::map<std::string, Entry> by_name;
  const auto& a = trace.api_calls;
  std::unordered_map<StringId, Entry*> api_entries;
  for (RowIndex i = 0; i < a.size(); ++i) {
    auto it = api_entries.find(a.name[i]);
    if (it == api_entries.end()) {
      Entry& e = by_name[std::string(api_display_name(trace.strings.get(a.name[i])))];
      it = api_entries.emplace(a.name[i], &e).first;
    }
    it->second->samples.push_back(a.end_ns[i] - a.start_ns[i]);
    it->second->category = "CUDA_API";
  }
  const auto& k = trace.kernels;
  std::unordered_map<StringId, Entry*> kernel_entries;
  for (RowIndex i = 0; i < k.size(); ++i) {
    const StringId id = kernel_name(trace, i, request.kernel_names);
    auto it = kernel_entries.find(id);
    if (it == kernel_entries.end()) it = kernel_entries.emplace(id, &by_name[std::string(trace.strings.get(id))]).first;
    it->second->samples.push_back(k.end_ns[i] - k.start_ns[i]);
    it->second->category = "CUDA_KERNEL";
  }
  auto memops = memops_by_name(
      trace, [&](RowIndex i) { return trace.memcpys.end_ns[i] - trace.memcpys.start_ns[i]; },
      [&](RowIndex i) { return trace.memsets.end_ns[i] - trace.memsets.start_ns[i]; });
  for (auto& [name, samples] : memops) {
    Entry& e = by_name[name];
    e.samples.insert(e.samples.end(), samples.begin(), samples.end());
    e.category = "MEMORY_OPER";
  }
  std::vector<SummaryGroup> groups;
  groups.reserve(by_name.size());
  for (auto& [name, entry] : by_name) {
    groups.push_back({std::move(entry.samples), {Cell(entry.category), Cell(name)}, {}});
  }
  return build_summary({"cuda_api_gpu_sum", "CUDA Summary (API/Kernels/MemOps)", "Instances",
                        {{"Category"}, {"Operation"}}},
                       std::move(groups));
}

}  // namespace kernscope::report
