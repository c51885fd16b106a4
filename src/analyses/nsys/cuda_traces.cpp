// cuda_gpu_trace (every kernel, memcpy and memset by start time), cuda_api_trace (every API call)
// and cuda_kern_exec_sum (launch API -> queue -> kernel execution, per API/kernel pair), following
// nsys 2025.3's SQL.
#include "analyses/nsys/cuda_traces.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/nsys/report_helpers.hpp"

namespace kernscope::report {
namespace {

Cell null_if_zero(std::int64_t v) { return v == 0 ? Cell{} : Cell{v}; }

Cell label_or_null(const std::map<std::int32_t, std::string>& labels, std::int32_t id) {
  auto it = labels.find(id);
  return it == labels.end() ? Cell{} : Cell{it->second};
}

std::string device_label(const Trace& trace, std::uint32_t device_id) {
  // printf('%s (%d)', gpu.name, deviceId) over a LEFT JOIN: an unknown device prints " (N)".
  for (const auto& d : trace.devices) {
    if (d.id == static_cast<std::int64_t>(device_id)) return d.name + " (" + std::to_string(device_id) + ")";
  }
  return " (" + std::to_string(device_id) + ")";
}

Cell throughput(std::int64_t bytes, std::int64_t duration) {
  // bytes * (1000000000 / duration): SQL integer division, NULL for a zero duration.
  if (duration == 0) return std::monostate{};
  return bytes * (1'000'000'000 / duration);
}

}  // namespace

Result<Table> cuda_gpu_trace(const Trace& trace, const ReportRequest& request) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has_gpu_info) return std::unexpected(no_data(trace, "a TARGET_INFO_GPU table"));
  if (!trace.has(EventKind::kKernels) && !trace.has(EventKind::kMemcpy) && !trace.has(EventKind::kMemset)) {
    return std::unexpected(no_data(trace, "GPU trace data"));
  }
  Table table;
  table.report = "cuda_gpu_trace";
  table.title = "CUDA GPU Trace";
  table.columns = {{"Start", Unit::kTimestamp}, {"Duration", Unit::kDuration}, {"CorrId"}, {"GrdX"},
                   {"GrdY"}, {"GrdZ"}, {"BlkX"}, {"BlkY"}, {"BlkZ"}, {"Reg/Trd"},
                   {"StcSMem", Unit::kBytes}, {"DymSMem", Unit::kBytes}, {"Bytes", Unit::kBytes},
                   {"Throughput", Unit::kThroughput}, {"SrcMemKd"}, {"DstMemKd"}, {"Device"},
                   {"Ctx"}, {"GreenCtx"}, {"Strm"}, {"Name"}};
  // Rows in UNION ALL order (kernels, memcpy, memset), then a stable sort by start.
  struct Source {
    TimeNs start;
    std::uint8_t kind;
    RowIndex row;
  };
  const auto& k = trace.kernels;
  const auto& c = trace.memcpys;
  const auto& s = trace.memsets;
  std::vector<Source> order;
  order.reserve(k.size() + c.size() + s.size());
  for (RowIndex i = 0; i < k.size(); ++i) order.push_back({k.start_ns[i], 0, i});
  for (RowIndex i = 0; i < c.size(); ++i) order.push_back({c.start_ns[i], 1, i});
  for (RowIndex i = 0; i < s.size(); ++i) order.push_back({s.start_ns[i], 2, i});
  std::stable_sort(order.begin(), order.end(), [](const Source& a, const Source& b) { return a.start < b.start; });

  std::unordered_map<std::uint32_t, std::string> devices;
  auto device = [&](std::uint32_t id) -> const std::string& {
    auto it = devices.find(id);
    if (it == devices.end()) it = devices.emplace(id, device_label(trace, id)).first;
    return it->second;
  };
  std::unordered_map<std::int32_t, std::string> memcpy_names;
  table.rows.reserve(order.size());
  for (const auto& src : order) {
    const RowIndex i = src.row;
    std::vector<Cell> row;
    row.reserve(21);
    if (src.kind == 0) {
      const std::int64_t duration = k.end_ns[i] - k.start_ns[i];
      const StringId name = kernel_name(trace, i, request.kernel_names);
      row = {k.start_ns[i], duration, std::int64_t{k.correlation_id[i]}, std::int64_t{k.grid_x[i]},
             std::int64_t{k.grid_y[i]}, std::int64_t{k.grid_z[i]}, std::int64_t{k.block_x[i]},
             std::int64_t{k.block_y[i]}, std::int64_t{k.block_z[i]},
             std::int64_t{k.registers_per_thread[i]}, std::int64_t{k.static_smem_bytes[i]},
             std::int64_t{k.dynamic_smem_bytes[i]}, Cell{}, Cell{}, Cell{}, Cell{},
             device(k.device_id[i]), null_if_zero(k.context_id[i]),
             null_if_zero(k.green_context_id[i]), null_if_zero(k.stream_id[i]),
             name == kNoString ? Cell{} : Cell{std::string(trace.strings.get(name))}};
    } else if (src.kind == 1) {
      const std::int64_t duration = c.end_ns[i] - c.start_ns[i];
      auto it = memcpy_names.find(c.copy_kind[i]);
      if (it == memcpy_names.end()) it = memcpy_names.emplace(c.copy_kind[i], memcpy_name(trace, c.copy_kind[i])).first;
      row = {c.start_ns[i], duration, std::int64_t{c.correlation_id[i]}, Cell{}, Cell{}, Cell{}, Cell{},
             Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, c.bytes[i], throughput(c.bytes[i], duration),
             label_or_null(trace.memory_kind_labels, c.src_kind[i]),
             label_or_null(trace.memory_kind_labels, c.dst_kind[i]), device(c.device_id[i]),
             null_if_zero(c.context_id[i]), null_if_zero(c.green_context_id[i]),
             null_if_zero(c.stream_id[i]), it->second.empty() ? Cell{} : Cell{it->second}};
    } else {
      const std::int64_t duration = s.end_ns[i] - s.start_ns[i];
      row = {s.start_ns[i], duration, std::int64_t{s.correlation_id[i]}, Cell{}, Cell{}, Cell{}, Cell{},
             Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, s.bytes[i], throughput(s.bytes[i], duration),
             label_or_null(trace.memory_kind_labels, s.mem_kind[i]), Cell{}, device(s.device_id[i]),
             null_if_zero(s.context_id[i]), null_if_zero(s.green_context_id[i]),
             null_if_zero(s.stream_id[i]), std::string(kMemsetName)};
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

Result<Table> cuda_api_trace(const Trace& trace, const ReportRequest&) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has_thread_names) return std::unexpected(no_data(trace, "a ThreadNames table"));
  if (!trace.has(EventKind::kApiCalls)) return std::unexpected(no_data(trace, "CUDA trace data"));
  const auto& a = trace.api_calls;
  Table table;
  table.report = "cuda_api_trace";
  table.title = "CUDA API Trace";
  table.columns = {{"Start", Unit::kTimestamp}, {"Duration", Unit::kDuration}, {"Name"}, {"Result"},
                   {"CorrID"}, {"Pid"}, {"Tid"}, {"T-Pri"}, {"Thread Name"}};
  // LEFT JOIN ThreadNames: a thread named twice yields one row per name, as in SQL.
  std::unordered_map<std::int64_t, std::vector<const Thread*>> names;
  for (const auto& t : trace.threads) names[t.global_tid].push_back(&t);
  std::vector<RowIndex> order(a.size());
  for (RowIndex i = 0; i < a.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](RowIndex x, RowIndex y) { return a.start_ns[x] < a.start_ns[y]; });
  std::unordered_map<StringId, std::string> display;
  table.rows.reserve(order.size());
  for (RowIndex i : order) {
    auto it = display.find(a.name[i]);
    if (it == display.end()) it = display.emplace(a.name[i], std::string(api_display_name(trace.strings.get(a.name[i])))).first;
    Cell name = a.name[i] == kNoString ? Cell{} : Cell{it->second};
    auto emit = [&](const Thread* thread) {
      table.rows.push_back({a.start_ns[i], a.end_ns[i] - a.start_ns[i], name,
                            std::int64_t{a.return_value[i]}, std::int64_t{a.correlation_id[i]},
                            pid_of(a.global_tid[i]), tid_of(a.global_tid[i]),
                            thread ? Cell{std::int64_t{thread->priority}} : Cell{},
                            thread ? Cell{thread->name} : Cell{}});
    };
    auto named = names.find(a.global_tid[i]);
    if (named == names.end()) {
      emit(nullptr);
    } else {
      for (const Thread* t : named->second) emit(t);
    }
  }
  return table;
}

Result<Table> cuda_kern_exec_sum(const Trace& trace, const ReportRequest& request) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kKernels)) return std::unexpected(no_data(trace, "CUDA kernel data"));
  if (!trace.has(EventKind::kApiCalls)) return std::unexpected(no_data(trace, "CUDA API data"));
  const auto& k = trace.kernels;
  const auto& a = trace.api_calls;
  const ApiLookup lookup(a);
  // GROUP BY pid, tid, device, API name, kernel name: a std::map keeps SQLite's ascending order.
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string, std::string>;
  struct Samples {
    std::vector<std::int64_t> total, api, queue, kernel;
  };
  std::map<Key, Samples> groups;
  std::unordered_map<StringId, std::string> api_names;
  // Inner join: kernels without a launching call are not in this report, and a kernel whose id
  // names several API rows (nsys's --cudabacktrace pairs) is counted once per row, as nsys does.
  for (RowIndex i = 0; i < k.size(); ++i) {
    lookup.for_each_row(k.global_pid[i], k.correlation_id[i], [&](RowIndex r) {
      auto an = api_names.find(a.name[r]);
      if (an == api_names.end()) an = api_names.emplace(a.name[r], std::string(api_display_name(trace.strings.get(a.name[r])))).first;
      const Key key{pid_of(a.global_tid[r]), tid_of(a.global_tid[r]), k.device_id[i], an->second,
                    std::string(trace.strings.get(kernel_name(trace, i, request.kernel_names)))};
      auto& g = groups[key];
      g.total.push_back(std::max(a.end_ns[r], k.end_ns[i]) - a.start_ns[r]);
      g.api.push_back(a.end_ns[r] - a.start_ns[r]);
      if (k.start_ns[i] - a.end_ns[r] >= 0) g.queue.push_back(k.start_ns[i] - a.end_ns[r]);
      g.kernel.push_back(k.end_ns[i] - k.start_ns[i]);
    });
  }
  Table table;
  table.report = "cuda_kern_exec_sum";
  table.title = "CUDA Kernel Launch & Exec Time Summary";
  table.columns = {{"PID"}, {"TID"}, {"DevId"}, {"Count"}, {"QCount"}};
  for (const char* prefix : {"T", "A", "Q", "K"}) {
    for (const char* stat : {"Avg", "Med", "Min", "Max", "StdDev"}) {
      table.columns.push_back({std::string(prefix) + stat, Unit::kDuration});
    }
  }
  table.columns.push_back({"API Name"});
  table.columns.push_back({"Kernel Name"});
  struct Row {
    double sort_key;
    std::vector<Cell> cells;
  };
  std::vector<Row> rows;
  rows.reserve(groups.size());
  auto append = [](std::vector<Cell>& cells, std::vector<std::int64_t>& samples) {
    auto st = compute_stats(samples);
    if (!st) {
      // nsys's stdev() of no values is 0.0 while avg, median, min and max are NULL.
      cells.insert(cells.end(), 4, Cell{});
      cells.push_back(0.0);
      return;
    }
    cells.push_back(round1(st->mean));
    cells.push_back(round1(st->median));
    cells.push_back(st->min);
    cells.push_back(st->max);
    cells.push_back(round1(st->stdev));
  };
  for (auto& [key, g] : groups) {
    Row row;
    const auto& [pid, tid, device, api_name, kernel] = key;
    row.cells = {pid, tid, device, static_cast<std::int64_t>(g.total.size()),
                 static_cast<std::int64_t>(g.queue.size())};
    append(row.cells, g.total);
    append(row.cells, g.api);
    append(row.cells, g.queue);
    append(row.cells, g.kernel);
    row.cells.push_back(api_name);
    row.cells.push_back(kernel);
    row.sort_key = std::get<double>(row.cells[5]);
    rows.push_back(std::move(row));
  }
  // ORDER BY the rounded TAvg, descending.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.sort_key > y.sort_key; });
  for (auto& r : rows) table.rows.push_back(std::move(r.cells));
  return table;
}

}  // namespace kernscope::report
