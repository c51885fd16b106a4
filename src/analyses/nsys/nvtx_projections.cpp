// nvtx_kern_sum and nvtx_gpu_proj_sum: NVTX ranges projected onto the GPU. A GPU operation
// belongs to every range that, on the launching thread, encloses its launching API call (nested
// ranges all get it), as in nsys 2025.3's SQL.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "analyses/nsys/nvtx_reports.hpp"
#include "analyses/nsys/report_helpers.hpp"

namespace kernscope::report {
namespace {

Result<void> check_projection_inputs(const Trace& trace, bool need_kernels) {
  if (!trace.has_string_table) return std::unexpected(no_data(trace, "a StringIds table"));
  if (!trace.has(EventKind::kNvtx)) return std::unexpected(no_data(trace, "NV Tools Extension (NVTX) data"));
  if (need_kernels && !trace.has(EventKind::kKernels)) return std::unexpected(no_data(trace, "CUDA kernel data"));
  if (!trace.has(EventKind::kApiCalls)) return std::unexpected(no_data(trace, "CUDA API data"));
  return {};
}

// Enclosing ranges of each API row, computed once per distinct API row.
std::unordered_map<RowIndex, std::vector<std::size_t>> enclosing_ranges(
    const Trace& trace, const std::vector<IndexedRange>& ranges, const std::vector<RowIndex>& api_rows) {
  const auto& a = trace.api_calls;
  std::vector<Interval> queries;
  queries.reserve(api_rows.size());
  for (RowIndex r : api_rows) queries.push_back({a.global_tid[r], a.start_ns[r], a.end_ns[r]});
  std::unordered_map<RowIndex, std::vector<std::size_t>> out;
  find_enclosing(ranges, queries, [&](std::size_t q, std::size_t r) { out[api_rows[q]].push_back(r); });
  return out;
}

}  // namespace

Result<Table> nvtx_kern_sum(const Trace& trace, const ReportRequest& request) {
  if (auto ok = check_projection_inputs(trace, true); !ok) return std::unexpected(ok.error());
  const auto& k = trace.kernels;
  const auto& a = trace.api_calls;
  const ApiLookup lookup(a);
  const auto ranges = index_ranges(trace);

  // Every API row with the kernel's id (SQL's join: nsys's --cudabacktrace pairs give two).
  std::vector<bool> seen(a.size(), false);
  std::vector<RowIndex> api_rows;
  for (RowIndex i = 0; i < k.size(); ++i) {
    lookup.for_each_row(k.global_pid[i], k.correlation_id[i], [&](RowIndex r) {
      if (!seen[r]) {
        seen[r] = true;
        api_rows.push_back(r);
      }
    });
  }
  auto enclosing = enclosing_ranges(trace, ranges, api_rows);

  // GROUP BY pid, tid, range name, style, kernel name; NULLs (nullopt) sort first, as in SQLite.
  using Key = std::tuple<std::optional<std::int64_t>, std::optional<std::int64_t>,
                         std::optional<std::string>, std::optional<std::string>, std::string>;
  struct Group {
    std::set<RowIndex> ranges, kernels;
    std::vector<std::int64_t> durations;  // one per joined (kernel, API row, range) row, as SQL's sum
  };
  std::map<Key, Group> groups;
  for (RowIndex i = 0; i < k.size(); ++i) {
    const std::string kernel(trace.strings.get(kernel_name(trace, i, request.kernel_names)));
    const std::int64_t duration = k.end_ns[i] - k.start_ns[i];
    // One joined row: the launching API row's thread (none: NULLs) and the ranges enclosing it.
    auto add = [&](std::optional<std::int64_t> pid, std::optional<std::int64_t> tid,
                   const std::vector<std::size_t>* found) {
      if (!found || found->empty()) {
        auto& g = groups[Key{pid, tid, std::nullopt, std::nullopt, kernel}];
        g.kernels.insert(i);
        g.durations.push_back(duration);
        return;
      }
      for (std::size_t r : *found) {
        const auto& range = ranges[r];
        auto& g = groups[Key{pid, tid, range.name, std::string(range.pushpop ? "PushPop" : "StartEnd"), kernel}];
        g.ranges.insert(range.row);
        g.kernels.insert(i);
        g.durations.push_back(duration);
      }
    };
    bool launched = false;
    lookup.for_each_row(k.global_pid[i], k.correlation_id[i], [&](RowIndex r) {
      launched = true;
      auto it = enclosing.find(r);
      add(pid_of(a.global_tid[r]), tid_of(a.global_tid[r]), it == enclosing.end() ? nullptr : &it->second);
    });
    if (!launched) add(std::nullopt, std::nullopt, nullptr);
  }

  struct Row {
    const Key* key;
    std::int64_t total;
    std::vector<Cell> cells;
  };
  std::vector<Row> rows;
  for (auto& [key, g] : groups) {
    auto st = compute_stats(g.durations);
    if (!st) continue;
    const auto& [pid, tid, name, style, kernel] = key;
    Row row{&key, st->sum, {}};
    row.cells = {name ? Cell{*name} : Cell{}, style ? Cell{*style} : Cell{}, pid ? Cell{*pid} : Cell{},
                 tid ? Cell{*tid} : Cell{}, static_cast<std::int64_t>(g.ranges.size()),
                 static_cast<std::int64_t>(g.kernels.size()), st->sum, round1(st->mean),
                 round1(st->median), st->min, st->max, round1(st->stdev), kernel};
    rows.push_back(std::move(row));
  }
  // ORDER BY range name, pid, tid, total time descending.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    const auto& [xp, xt, xn, xs, xk] = *x.key;
    const auto& [yp, yt, yn, ys, yk] = *y.key;
    if (xn != yn) return xn < yn;
    if (xp != yp) return xp < yp;
    if (xt != yt) return xt < yt;
    return x.total > y.total;
  });
  Table table;
  table.report = "nvtx_kern_sum";
  table.title = "NVTX Range Kernel Summary";
  table.columns = {{"NVTX Range"}, {"Style"}, {"PID"}, {"TID"}, {"NVTX Inst"}, {"Kern Inst"},
                   {"Total Time", Unit::kDuration}, {"Avg", Unit::kDuration}, {"Med", Unit::kDuration},
                   {"Min", Unit::kDuration}, {"Max", Unit::kDuration}, {"StdDev", Unit::kDuration},
                   {"Kernel Name"}};
  for (auto& r : rows) table.rows.push_back(std::move(r.cells));
  return table;
}

Result<Table> nvtx_gpu_proj_sum(const Trace& trace, const ReportRequest&) {
  if (auto ok = check_projection_inputs(trace, false); !ok) return std::unexpected(ok.error());
  if (!trace.has(EventKind::kKernels) && !trace.has(EventKind::kMemcpy) && !trace.has(EventKind::kMemset)) {
    return std::unexpected(no_data(trace, "GPU operation data"));
  }
  const auto& a = trace.api_calls;
  const auto ranges = index_ranges(trace);

  // Parent of each range: the tightest other range on the same thread that contains it
  // (ties: the lowest row, which SQLite's min() keeps as the first seen).
  std::vector<std::optional<std::size_t>> parent(ranges.size());
  {
    std::vector<Interval> queries;
    queries.reserve(ranges.size());
    for (const auto& r : ranges) queries.push_back({r.global_tid, r.start_ns, r.end_ns});
    std::vector<std::int64_t> best(ranges.size(), INT64_MAX);
    find_enclosing(ranges, queries, [&](std::size_t child, std::size_t candidate) {
      if (child == candidate) return;
      const auto tight = (ranges[child].start_ns - ranges[candidate].start_ns) +
                         (ranges[candidate].end_ns - ranges[child].end_ns);
      if (tight < best[child] || (tight == best[child] && ranges[candidate].row < ranges[*parent[child]].row)) {
        best[child] = tight;
        parent[child] = candidate;
      }
    });
  }
  // Depth below a root; ranges caught in a parent cycle (identical ranges) have no level.
  std::vector<std::optional<std::int64_t>> level(ranges.size());
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    std::vector<std::size_t> chain;
    std::set<std::size_t> on_chain;
    std::optional<std::size_t> cur = r;
    std::optional<std::int64_t> base;
    while (cur) {
      if (level[*cur]) { base = *level[*cur]; break; }
      if (!on_chain.insert(*cur).second) break;  // cycle
      chain.push_back(*cur);
      if (!parent[*cur]) { base = -1; break; }
      cur = parent[*cur];
    }
    if (!base) continue;
    std::int64_t depth = *base;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) level[*it] = ++depth;
  }

  // GPU operations with their launching API calls (inner join: one entry per API row with the id).
  struct Op {
    TimeNs start, end;
    RowIndex api;
  };
  std::vector<Op> ops;
  const ApiLookup lookup(a);
  auto add_ops = [&](const auto& columns) {
    for (RowIndex i = 0; i < columns.size(); ++i) {
      lookup.for_each_row(columns.global_pid[i], columns.correlation_id[i],
                          [&](RowIndex r) { ops.push_back({columns.start_ns[i], columns.end_ns[i], r}); });
    }
  };
  add_ops(trace.kernels);
  add_ops(trace.memcpys);
  add_ops(trace.memsets);
  std::vector<RowIndex> api_rows;
  {
    std::vector<bool> seen(a.size(), false);
    for (const auto& op : ops) {
      if (!seen[op.api]) {
        seen[op.api] = true;
        api_rows.push_back(op.api);
      }
    }
  }
  auto enclosing = enclosing_ranges(trace, ranges, api_rows);
  struct Projection {
    TimeNs first_start = INT64_MAX, last_end = INT64_MIN;
    std::set<std::uint32_t> correlations;
    bool any = false;
  };
  std::vector<Projection> proj(ranges.size());
  for (const auto& op : ops) {
    auto it = enclosing.find(op.api);
    if (it == enclosing.end()) continue;
    for (std::size_t r : it->second) {
      auto& p = proj[r];
      p.any = true;
      p.first_start = std::min(p.first_start, op.start);
      p.last_end = std::max(p.last_end, op.end);
      p.correlations.insert(a.correlation_id[op.api]);
    }
  }
  std::vector<std::int64_t> children(ranges.size(), 0);  // projected children per range
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    if (proj[r].any && parent[r]) ++children[*parent[r]];
  }

  struct Group {
    std::vector<std::int64_t> proj_durations;
    std::int64_t range_total = 0, ops_total = 0, level_sum = 0, level_count = 0, child_sum = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;  // (name, style)
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    if (!proj[r].any) continue;
    auto& g = groups[{ranges[r].name, ranges[r].pushpop ? "PushPop" : "StartEnd"}];
    g.proj_durations.push_back(proj[r].last_end - proj[r].first_start);
    g.range_total += ranges[r].end_ns - ranges[r].start_ns;
    g.ops_total += static_cast<std::int64_t>(proj[r].correlations.size());
    if (level[r]) {
      g.level_sum += *level[r];
      ++g.level_count;
    }
    g.child_sum += children[r];
  }
  struct Row {
    std::int64_t total;
    std::vector<Cell> cells;
  };
  std::vector<Row> rows;
  for (auto& [key, g] : groups) {
    const auto n = static_cast<double>(g.proj_durations.size());
    auto st = compute_stats(g.proj_durations);
    Row row{st->sum, {}};
    row.cells = {key.first, key.second, st->sum, g.range_total, st->count, round1(st->mean),
                 round1(st->median), st->min, st->max, round1(st->stdev), g.ops_total,
                 round1(static_cast<double>(g.ops_total) / n),
                 g.level_count ? round1(static_cast<double>(g.level_sum) / static_cast<double>(g.level_count)) : Cell{},
                 round1(static_cast<double>(g.child_sum) / n)};
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.total > y.total; });
  Table table;
  table.report = "nvtx_gpu_proj_sum";
  table.title = "NVTX GPU Projection Summary";
  table.columns = {{"Range"}, {"Style"}, {"Total Proj Time", Unit::kDuration},
                   {"Total Range Time", Unit::kDuration}, {"Range Instances"},
                   {"Proj Avg", Unit::kDuration}, {"Proj Med", Unit::kDuration},
                   {"Proj Min", Unit::kDuration}, {"Proj Max", Unit::kDuration},
                   {"Proj StdDev", Unit::kDuration}, {"Total GPU Ops"}, {"Avg GPU Ops"},
                   {"Avg Range Lvl"}, {"Avg Num Child"}};
  for (auto& r : rows) table.rows.push_back(std::move(r.cells));
  return table;
}

}  // namespace kernscope::report
