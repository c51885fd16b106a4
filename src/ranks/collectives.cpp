// A rank's NCCL kernels as collectives: kind, communicator, sequence, size; and how much of its
// communication time overlapped computation on the same GPU.
#include "ranks/collectives.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <tuple>

#include "kernscope/op_classes.hpp"

namespace kernscope::ranks {
namespace {

std::string squeezed_lower(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// Total length of the union of intervals (sorted or not).
std::int64_t union_length(std::vector<std::pair<TimeNs, TimeNs>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0;
  TimeNs open = 0, close = 0;
  bool any = false;
  for (const auto& [s, e] : intervals) {
    if (!any || s > close) {
      if (any) total += close - open;
      open = s;
      close = e;
      any = true;
    } else {
      close = std::max(close, e);
    }
  }
  if (any) total += close - open;
  return total;
}

std::int64_t intersection_length(const std::vector<std::pair<TimeNs, TimeNs>>& a,
                                 const std::vector<std::pair<TimeNs, TimeNs>>& b) {
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const TimeNs lo = std::max(a[i].first, b[j].first);
    const TimeNs hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return total;
}

const CommArgs* args_by_correlation(const CommArgsLookup& lookup, std::uint32_t correlation) {
  auto it = std::lower_bound(lookup.by_correlation.begin(), lookup.by_correlation.end(), correlation,
                             [](const auto& entry, std::uint32_t c) { return entry.first < c; });
  return it != lookup.by_correlation.end() && it->first == correlation ? &it->second : nullptr;
}

// The innermost (latest-starting) operation with arguments that encloses time `t`.
const CommArgs* args_enclosing(const CommArgsLookup& lookup, TimeNs t) {
  const auto& ops = lookup.operations;
  auto it = std::upper_bound(ops.begin(), ops.end(), t, [](TimeNs v, const auto& op) { return v < op.start_ns; });
  // Operations nest shallowly (record_param_comms inside nccl:*), so a short look back suffices.
  for (int steps = 0; it != ops.begin() && steps < 64; ++steps) {
    --it;
    if (it->end_ns >= t) return &it->args;
  }
  return nullptr;
}

}  // namespace

std::vector<std::pair<TimeNs, TimeNs>> merged_intervals(std::vector<std::pair<TimeNs, TimeNs>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<TimeNs, TimeNs>> out;
  for (const auto& iv : intervals) {
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

std::string_view kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kSendRecv: return "send_recv";
    case CollectiveKind::kOther: return "other";
  }
  return "other";
}

CollectiveKind kind_from_nccl_operation(std::string_view operation) {
  const std::string op = squeezed_lower(operation);
  if (op == "allreduce") return CollectiveKind::kAllReduce;
  if (op == "allgather") return CollectiveKind::kAllGather;
  if (op == "reducescatter") return CollectiveKind::kReduceScatter;
  if (op == "broadcast") return CollectiveKind::kBroadcast;
  if (op == "reduce") return CollectiveKind::kReduce;
  if (op == "alltoall") return CollectiveKind::kAllToAll;
  if (op == "sendrecv" || op == "send" || op == "recv") return CollectiveKind::kSendRecv;
  return CollectiveKind::kOther;
}

CollectiveKind kind_from_collective_name(std::string_view name) {
  if (name.starts_with("nccl:")) name.remove_prefix(5);
  const std::string n = squeezed_lower(name);
  // Longest names first: "allreduce" contains "reduce", "reducescatter" contains "reduce".
  if (n.find("allreduce") != std::string::npos) return CollectiveKind::kAllReduce;
  if (n.find("reducescatter") != std::string::npos) return CollectiveKind::kReduceScatter;
  if (n.find("allgather") != std::string::npos) return CollectiveKind::kAllGather;
  if (n.find("alltoall") != std::string::npos) return CollectiveKind::kAllToAll;
  if (n.find("broadcast") != std::string::npos) return CollectiveKind::kBroadcast;
  if (n.starts_with("reduce")) return CollectiveKind::kReduce;
  if (n.find("send") != std::string::npos || n.find("recv") != std::string::npos) return CollectiveKind::kSendRecv;
  return CollectiveKind::kOther;
}

double bus_bandwidth_factor(CollectiveKind kind, std::int64_t ranks) {
  if (ranks <= 0) return 1.0;
  const double n = static_cast<double>(ranks);
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll: return (n - 1) / n;
    default: return 1.0;
  }
}

int dtype_bytes(std::string_view dtype) {
  std::string d = squeezed_lower(dtype);
  if (d.ends_with("t") && (d.starts_with("int") || d.starts_with("uint"))) d.pop_back();  // int8_t
  static const std::map<std::string, int, std::less<>> sizes = {
      {"float", 4}, {"float32", 4}, {"f32", 4}, {"fp32", 4}, {"int", 4}, {"int32", 4}, {"i32", 4},
      {"uint32", 4}, {"u32", 4}, {"double", 8}, {"float64", 8}, {"f64", 8}, {"long", 8}, {"int64", 8},
      {"i64", 8}, {"uint64", 8}, {"u64", 8}, {"half", 2}, {"float16", 2}, {"f16", 2}, {"fp16", 2},
      {"bfloat16", 2}, {"bf16", 2}, {"short", 2}, {"int16", 2}, {"char", 1}, {"byte", 1}, {"bool", 1},
      {"int8", 1}, {"i8", 1}, {"uint8", 1}, {"u8", 1}, {"f8e4m3", 1}, {"f8e5m2", 1},
      {"float8e4m3fn", 1}, {"float8e5m2", 1}};
  auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

bool is_nccl_kernel(std::string_view name) {
  return name.starts_with("ncclKernel_") || name.starts_with("ncclDevKernel_");
}

std::string_view nccl_kernel_name(const Trace& trace, RowIndex i) {
  const auto& k = trace.kernels;
  if (const std::string_view name = trace.strings.get(k.demangled_name[i]); is_nccl_kernel(name)) return name;
  if (i < k.short_name.size()) {
    if (const std::string_view name = trace.strings.get(k.short_name[i]); is_nccl_kernel(name)) return name;
  }
  return {};
}

RankCollectives collectives_of(const Trace& trace, std::int64_t global_pid, const CommArgsLookup* args) {
  RankCollectives out;
  const auto& k = trace.kernels;
  std::vector<RowIndex> nccl_rows;
  // Per device: communication and computation intervals, for the overlap.
  std::map<std::uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> comm, compute;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (global_pid != -1 && k.global_pid[i] != global_pid) continue;
    if (k.end_ns[i] <= k.start_ns[i]) continue;
    const bool nccl = !nccl_kernel_name(trace, i).empty();
    (nccl ? comm : compute)[k.device_id[i]].emplace_back(k.start_ns[i], k.end_ns[i]);
    if (nccl) nccl_rows.push_back(i);
  }
  for (auto& [device, intervals] : comm) {
    auto merged_comm = merged_intervals(intervals);
    auto merged_compute = merged_intervals(compute[device]);
    for (const auto& [s, e] : merged_comm) out.comm_ns += e - s;
    for (const auto& [s, e] : merged_compute) out.compute_ns += e - s;
    out.overlap_ns += intersection_length(merged_comm, merged_compute);
  }
  for (auto& [device, intervals] : compute) {
    if (!comm.contains(device)) out.compute_ns += union_length(intervals);
  }
  std::stable_sort(nccl_rows.begin(), nccl_rows.end(), [&](RowIndex a, RowIndex b) { return k.start_ns[a] < k.start_ns[b]; });

  // Launch times of the NCCL kernels (by correlation id within the process): arguments carried by
  // the CPU operation that launched them, and the step they belong to.
  std::map<std::pair<std::int64_t, std::uint32_t>, TimeNs> launch_of;
  for (RowIndex i : nccl_rows) launch_of.emplace(std::pair{k.global_pid[i], k.correlation_id[i]}, kNoTime);
  {
    const auto& a = trace.api_calls;
    for (RowIndex j = 0; j < a.size(); ++j) {
      auto it = launch_of.find({process_key(a.global_tid[j]), a.correlation_id[j]});
      if (it != launch_of.end()) it->second = a.start_ns[j];
    }
  }
  // PyTorch profiler's steps (ProfilerStep#N ranges), start order.
  std::vector<std::pair<TimeNs, std::int64_t>> steps;
  for (RowIndex j = 0; j < trace.nvtx.size(); ++j) {
    const std::string_view text = trace.strings.get(trace.nvtx.text[j]);
    if (!text.starts_with("ProfilerStep#") || text.size() == 13) continue;
    const std::string_view digits = text.substr(13);
    if (!std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }) || digits.size() > 15) continue;
    steps.emplace_back(trace.nvtx.start_ns[j], std::stoll(std::string(digits)));
  }
  std::sort(steps.begin(), steps.end());
  auto step_at = [&](TimeNs t) -> std::int64_t {
    auto it = std::upper_bound(steps.begin(), steps.end(), std::pair{t, std::numeric_limits<std::int64_t>::max()});
    return it == steps.begin() ? -1 : std::prev(it)->second;
  };

  std::map<std::pair<std::uint32_t, std::uint32_t>, int> stream_order;  // (device, stream) -> k
  std::map<std::string, std::int64_t> next_index;
  std::int64_t from_kernel_args = 0, from_operations = 0;
  for (RowIndex i : nccl_rows) {
    Collective c;
    const std::string_view name = nccl_kernel_name(trace, i);
    c.kernel = std::string(name);
    c.start_ns = k.start_ns[i];
    c.end_ns = k.end_ns[i];
    c.device = k.device_id[i];
    c.stream = k.stream_id[i];
    if (auto parsed = parse_nccl_kernel(name)) {
      c.kind = kind_from_nccl_operation(parsed->operation);
      c.algorithm = parsed->algorithm;
      c.protocol = parsed->protocol;
      c.dtype = parsed->dtype;
    }
    const auto launch = launch_of.find({k.global_pid[i], k.correlation_id[i]});
    const bool launched = launch != launch_of.end() && launch->second != kNoTime;
    c.step = steps.empty() ? -1 : step_at(launched ? launch->second : c.start_ns);
    if (launched) c.launch_ns = launch->second;
    const CommArgs* found = nullptr;
    if (args) {
      found = args_by_correlation(*args, k.correlation_id[i]);
      if (found) {
        ++from_kernel_args;
      } else if (launched) {
        found = args_enclosing(*args, launch->second);
        if (found) ++from_operations;
      }
    }
    if (found) {
      if (auto kind = kind_from_collective_name(found->collective); kind != CollectiveKind::kOther) c.kind = kind;
      if (!found->dtype.empty()) c.dtype = found->dtype;
      c.group = found->group;
      c.seq = found->seq;
      c.group_size = found->group_size;
      const int width = dtype_bytes(c.dtype);
      const std::int64_t elements = std::max(found->in_elements, found->out_elements);
      if (width > 0 && elements >= 0) c.bytes = elements * width;
      ++out.with_args;
    }
    if (c.group.empty()) {
      auto [it, added] = stream_order.emplace(std::pair{c.device, c.stream}, static_cast<int>(stream_order.size()));
      c.group = "stream " + std::to_string(it->second);
    }
    c.index = next_index[c.group]++;
    out.items.push_back(std::move(c));
  }

  const std::int64_t n = static_cast<std::int64_t>(out.items.size());
  const bool any_seq = std::any_of(out.items.begin(), out.items.end(), [](const Collective& c) { return c.seq >= 0; });
  if (n == 0) {
    out.identity = "no NCCL kernels";
  } else if (out.with_args == 0) {
    out.identity = "kernel names only: communicator = the rank's k-th NCCL stream, matched by order within it";
  } else {
    out.identity = std::string(any_seq ? "process group and sequence number" : "process group, matched by order within it") +
                   " from " + (from_kernel_args >= from_operations ? "the kernels' collective arguments" : "record_param_comms / nccl:* arguments") +
                   " (" + std::to_string(out.with_args) + " of " + std::to_string(n) + " collectives)";
  }
  return out;
}

}  // namespace kernscope::ranks
