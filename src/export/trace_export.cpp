#include "export/export.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <vector>

#include "model/nvtx_names.hpp"
#include "model/kineto_names.hpp"
#include "render/json_writer.hpp"

namespace kernscope {
namespace {

// Exact microseconds with three decimals from nanoseconds relative to the base.
void append_us(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    ns = -ns;
  }
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

// Where events go in the viewer: Chrome JSON identifies a track by (pid, tid).
struct TrackId {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  bool operator<(const TrackId& o) const { return pid != o.pid ? pid < o.pid : tid < o.tid; }
};

// Puts each interval on the first lane of its track where it nests (inside the innermost open
// interval, or after it). Lane 0 is the track itself; other lanes become "overlap" tracks.
class LaneAssigner {
 public:
  std::size_t place(TimeNs start, TimeNs end) {
    for (std::size_t lane = 0;; ++lane) {
      if (lane == lanes_.size()) lanes_.emplace_back();
      auto& open = lanes_[lane];
      while (!open.empty() && open.back() <= start) open.pop_back();
      if (open.empty() || open.back() >= end) {
        open.push_back(end);
        return lane;
      }
    }
  }
  std::size_t lanes() const { return lanes_.size(); }

 private:
  std::vector<std::vector<TimeNs>> lanes_;  // per lane: ends of the open intervals, innermost last
};

constexpr std::int64_t kLaneTidStride = 1'000'000'000;

class Writer {
 public:
  Writer(const Trace& t, const OpRuleSet& rules, std::ostream& out) : t_(t), rules_(rules), out_(out) {}

  Result<ExportSummary> run();

 private:
  // The document's parts, in the order they are written.
  void write_header();
  void write_kernels();
  void write_copies_and_sets();
  void write_graphs_and_syncs();
  void write_api_calls();
  void write_nvtx();
  void write_gpu_samples();
  void write_names();
  // A device's track pid (devices_seen_ remembers it, to be named at the end).
  std::int64_t device_pid(std::uint32_t device);
  static TrackId host_track(std::int64_t global_tid) { return TrackId{pid_of(global_tid), tid_of(global_tid)}; }
  // A flow from the API call that launched `correlation` in the process to the GPU event at `at`.
  void flow(std::int64_t global_pid, std::uint32_t correlation, TrackId to, TimeNs at);
  void flush_if_large() {
    if (buf_.size() > (1u << 20)) {
      out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
      buf_.clear();
    }
  }
  void begin_event() {
    buf_ += first_ ? "\n  {" : ",\n  {";
    first_ = false;
  }
  void slice(std::string_view cat, std::string_view name, TrackId track, TimeNs start, TimeNs end);
  void track_name(TrackId track, std::string_view thread_name);
  void process_name(std::int64_t pid, std::string_view name, std::int64_t sort_index);
  std::string_view class_of(StringId name);
  // Sorts rows by (track, start, longest first) and gives each its lane, naming overlap tracks.
  template <class TrackOf, class Emit>
  void place_rows(std::size_t count, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                  TrackOf track_of, std::string_view track_label, Emit emit);

  const Trace& t_;
  const OpRuleSet& rules_;
  std::ostream& out_;
  std::string buf_;
  bool first_ = true;
  TimeNs base_ = 0;
  ExportSummary summary_;
  std::unordered_map<StringId, std::string> classes_;
  std::map<TrackId, std::string> named_tracks_;
  std::int64_t device_pid_base_ = 0;
  std::set<std::uint32_t> devices_seen_;  // every device given a track, named at the end
  std::unordered_map<std::uint64_t, RowIndex> launch_of_;  // (pid, correlation) -> API call row
  std::int64_t next_flow_ = 1;
};

std::string_view Writer::class_of(StringId name) {
  auto it = classes_.find(name);
  if (it == classes_.end()) it = classes_.emplace(name, rules_.classify(t_.strings.get(name)).first).first;
  return it->second;
}

void Writer::slice(std::string_view cat, std::string_view name, TrackId track, TimeNs start, TimeNs end) {
  begin_event();
  buf_ += "\"ph\": \"X\", \"cat\": ";
  append_json_string(buf_, cat);
  buf_ += ", \"name\": ";
  append_json_string(buf_, name);
  fmt::format_to(std::back_inserter(buf_), ", \"pid\": {}, \"tid\": {}, \"ts\": ", track.pid, track.tid);
  append_us(buf_, start - base_);
  buf_ += ", \"dur\": ";
  append_us(buf_, std::max<TimeNs>(end - start, 0));
  ++summary_.events;
}

void Writer::track_name(TrackId track, std::string_view thread_name) {
  if (named_tracks_.contains(track)) return;
  named_tracks_.emplace(track, std::string(thread_name));
}

void Writer::process_name(std::int64_t pid, std::string_view name, std::int64_t sort_index) {
  begin_event();
  fmt::format_to(std::back_inserter(buf_), "\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, \"args\": {{\"name\": ", pid);
  append_json_string(buf_, name);
  buf_ += "}}";
  begin_event();
  fmt::format_to(std::back_inserter(buf_),
                 "\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": {}, \"tid\": 0, \"args\": {{\"sort_index\": {}}}}}",
                 pid, sort_index);
}

template <class TrackOf, class Emit>
void Writer::place_rows(std::size_t count, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                        TrackOf track_of, std::string_view track_label, Emit emit) {
  std::vector<RowIndex> order(count);
  std::iota(order.begin(), order.end(), RowIndex{0});
  std::vector<TrackId> tracks(count);
  for (RowIndex i = 0; i < count; ++i) tracks[i] = track_of(i);
  std::sort(order.begin(), order.end(), [&](RowIndex a, RowIndex b) {
    if (tracks[a].pid != tracks[b].pid) return tracks[a].pid < tracks[b].pid;
    if (tracks[a].tid != tracks[b].tid) return tracks[a].tid < tracks[b].tid;
    if (start[a] != start[b]) return start[a] < start[b];
    return end[a] > end[b];
  });
  LaneAssigner lanes;
  TrackId current{-1, -1};
  for (RowIndex i : order) {
    const TrackId track = tracks[i];
    if (track.pid != current.pid || track.tid != current.tid) {
      lanes = LaneAssigner();
      current = track;
    }
    const TimeNs e = end[i] == kNoTime ? start[i] : end[i];
    const std::size_t lane = lanes.place(start[i], e);
    TrackId placed = track;
    placed.tid += static_cast<std::int64_t>(lane) * kLaneTidStride;
    if (lane == 0) {
      track_name(placed, fmt::format("{} {}", track_label, track.tid));
    } else if (!named_tracks_.contains(placed)) {
      ++summary_.overlap_tracks;
      track_name(placed, fmt::format("{} {} (overlap {})", track_label, track.tid, lane));
    }
    emit(i, placed, e);
    flush_if_large();
  }
}

void Writer::write_header() {
  // The base: the earliest event, rounded down to a second, so viewers keep full precision.
  TimeNs first = kMaxTime;
  for (const auto* column : {&t_.kernels.start_ns, &t_.memcpys.start_ns, &t_.memsets.start_ns, &t_.graph_execs.start_ns, &t_.api_calls.start_ns,
                             &t_.syncs.start_ns, &t_.nvtx.start_ns, &t_.osrt.start_ns, &t_.gpu_samples.time_ns}) {
    for (TimeNs v : *column) {
      if (v != kNoTime) first = std::min(first, v);
    }
  }
  base_ = first == kMaxTime ? 0 : first - ((first % 1'000'000'000) + 1'000'000'000) % 1'000'000'000;

  buf_ += "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ns\",\n";
  fmt::format_to(std::back_inserter(buf_), "\"baseTimeNanoseconds\": {},\n\"deviceProperties\": [", base_);
  for (std::size_t i = 0; i < t_.devices.size(); ++i) {
    const auto& d = t_.devices[i];
    buf_ += i ? ",\n  {" : "\n  {";
    fmt::format_to(std::back_inserter(buf_), "\"id\": {}, \"name\": ", d.id);
    append_json_string(buf_, d.name);
    fmt::format_to(std::back_inserter(buf_), ", \"totalGlobalMem\": {}, \"computeMajor\": {}, \"computeMinor\": {}, \"numSms\": {}}}",
                   d.total_memory_bytes, d.compute_major, d.compute_minor, d.sm_count);
  }
  buf_ += "],\n";
  if (t_.source.distributed) {
    buf_ += "\"distributedInfo\": {\"backend\": ";
    append_json_string(buf_, t_.source.distributed->backend);
    fmt::format_to(std::back_inserter(buf_), ", \"rank\": {}, \"world_size\": {}}},\n", t_.source.distributed->rank,
                   t_.source.distributed->world_size);
  }
  buf_ += "\"traceEvents\": [";
}

std::int64_t Writer::device_pid(std::uint32_t device) {
  devices_seen_.insert(device);
  return device_pid_base_ + device;
}

void Writer::flow(std::int64_t global_pid, std::uint32_t correlation, TrackId to, TimeNs at) {
  if (correlation == 0) return;
  const auto& a = t_.api_calls;
  auto it = launch_of_.find((static_cast<std::uint64_t>(pid_of(global_pid)) << 32) | correlation);
  if (it == launch_of_.end()) return;
  const RowIndex api = it->second;
  const std::int64_t id = next_flow_++;
  begin_event();
  fmt::format_to(std::back_inserter(buf_), "\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": ",
                 id, pid_of(a.global_tid[api]), tid_of(a.global_tid[api]));
  append_us(buf_, a.start_ns[api] - base_);
  buf_ += "}";
  begin_event();
  fmt::format_to(std::back_inserter(buf_), "\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": ",
                 id, to.pid, to.tid);
  append_us(buf_, at - base_);
  buf_ += "}";
  ++summary_.flows;
}

void Writer::write_kernels() {
  const auto& k = t_.kernels;
  const bool kernel_details = !k.grid_x.empty();
  place_rows(
      k.size(), k.start_ns, k.end_ns, [&](RowIndex i) { return TrackId{device_pid(k.device_id[i]), k.stream_id.empty() ? 0 : k.stream_id[i]}; },
      "stream", [&](RowIndex i, TrackId track, TimeNs end) {
        slice("kernel", t_.strings.get(k.demangled_name[i]), track, k.start_ns[i], end);
        fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"device\": {}, \"stream\": {}, \"correlation\": {}",
                       k.device_id[i], k.stream_id.empty() ? 0 : k.stream_id[i], k.correlation_id[i]);
        if (kernel_details) {
          fmt::format_to(std::back_inserter(buf_),
                         ", \"context\": {}, \"registers per thread\": {}, \"shared memory\": {}, \"grid\": [{}, {}, {}], "
                         "\"block\": [{}, {}, {}]",
                         k.context_id[i], k.registers_per_thread[i], k.static_smem_bytes[i] + k.dynamic_smem_bytes[i],
                         k.grid_x[i], k.grid_y[i], k.grid_z[i], k.block_x[i], k.block_y[i], k.block_z[i]);
          if (k.graph_id[i] != 0) fmt::format_to(std::back_inserter(buf_), ", \"graph id\": {}", k.graph_id[i]);
          if (k.external_id[i] != 0) fmt::format_to(std::back_inserter(buf_), ", \"External id\": {}", k.external_id[i]);
        }
        if (k.graph_node_id[i] != 0) fmt::format_to(std::back_inserter(buf_), ", \"graph node id\": {}", k.graph_node_id[i]);
        buf_ += ", \"op class\": ";
        append_json_string(buf_, class_of(k.demangled_name[i]));
        buf_ += "}}";
        flow(k.global_pid[i], k.correlation_id[i], track, k.start_ns[i]);
      });
}

void Writer::write_copies_and_sets() {
  const auto& m = t_.memcpys;
  place_rows(
      m.size(), m.start_ns, m.end_ns, [&](RowIndex i) { return TrackId{device_pid(m.device_id[i]), m.stream_id[i]}; }, "stream",
      [&](RowIndex i, TrackId track, TimeNs end) {
        auto label = [&](std::int32_t kind) {
          auto it = t_.memory_kind_labels.find(kind);
          return it == t_.memory_kind_labels.end() ? std::string("Unknown") : it->second;
        };
        slice("gpu_memcpy", fmt::format("Memcpy {} ({} -> {})", kineto_names::copy_code(m.copy_kind[i]), label(m.src_kind[i]), label(m.dst_kind[i])),
              track, m.start_ns[i], end);
        fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"device\": {}, \"stream\": {}, \"correlation\": {}, \"bytes\": {}}}}}",
                       m.device_id[i], m.stream_id[i], m.correlation_id[i], m.bytes[i]);
        flow(m.global_pid[i], m.correlation_id[i], track, m.start_ns[i]);
      });

  const auto& s = t_.memsets;
  place_rows(
      s.size(), s.start_ns, s.end_ns, [&](RowIndex i) { return TrackId{device_pid(s.device_id[i]), s.stream_id[i]}; }, "stream",
      [&](RowIndex i, TrackId track, TimeNs end) {
        auto it = t_.memory_kind_labels.find(s.mem_kind[i]);
        slice("gpu_memset", fmt::format("Memset ({})", it == t_.memory_kind_labels.end() ? "Unknown" : it->second), track,
              s.start_ns[i], end);
        fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"device\": {}, \"stream\": {}, \"correlation\": {}, \"bytes\": {}}}}}",
                       s.device_id[i], s.stream_id[i], s.correlation_id[i], s.bytes[i]);
        flow(s.global_pid[i], s.correlation_id[i], track, s.start_ns[i]);
      });
}

void Writer::write_graphs_and_syncs() {
  // Whole-graph executions (graphs traced as units) on their stream, like the kernels they hide.
  const auto& graphs = t_.graph_execs;
  place_rows(
      graphs.size(), graphs.start_ns, graphs.end_ns, [&](RowIndex i) { return TrackId{device_pid(graphs.device_id[i]), graphs.stream_id[i]}; }, "stream",
      [&](RowIndex i, TrackId track, TimeNs end) {
        slice("cuda_graph", fmt::format("CUDA graph exec {}", graphs.graph_exec_id[i]), track, graphs.start_ns[i], end);
        fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"device\": {}, \"stream\": {}, \"correlation\": {}, \"graph id\": {}, \"graph exec id\": {}}}}}",
                       graphs.device_id[i], graphs.stream_id[i], graphs.correlation_id[i], graphs.graph_id[i],
                       graphs.graph_exec_id[i]);
        flow(graphs.global_pid[i], graphs.correlation_id[i], track, graphs.start_ns[i]);
      });

  // Synchronizations: on a track of their own beside their stream (they overlap its work).
  const auto& y = t_.syncs;
  place_rows(
      y.size(), y.start_ns, y.end_ns,
      [&](RowIndex i) { return TrackId{device_pid(y.device_id[i]), 500'000'000 + static_cast<std::int64_t>(y.stream_id[i])}; },
      "sync, stream", [&](RowIndex i, TrackId track, TimeNs end) {
        slice("cuda_sync", kineto_names::sync_name(y.sync_type[i]), track, y.start_ns[i], end);
        fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"device\": {}, \"stream\": {}, \"correlation\": {}}}}}",
                       y.device_id[i], y.stream_id[i], y.correlation_id[i]);
      });
}

void Writer::write_api_calls() {
  const auto& a = t_.api_calls;
  place_rows(
      a.size(), a.start_ns, a.end_ns, [&](RowIndex i) { return host_track(a.global_tid[i]); }, "thread",
      [&](RowIndex i, TrackId track, TimeNs end) {
        slice(a.event_class.empty() || a.event_class[i] != 1 ? "cuda_runtime" : "cuda_driver", t_.strings.get(a.name[i]),
              track, a.start_ns[i], end);
        fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"correlation\": {}}}}}", a.correlation_id[i]);
      });
}

void Writer::write_nvtx() {
  // NVTX: ranges on their threads (GPU-side annotations on their stream); marks as instants.
  const auto& n = t_.nvtx;
  NvtxDomainNames domains(t_);
  std::vector<RowIndex> ranges, marks;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (is_nvtx_range(n.event_type[i]) && n.end_ns[i] != kNoTime) ranges.push_back(i);
    else if (n.event_type[i] == kNvtxMark) marks.push_back(i);
  }
  std::vector<TimeNs> range_start(ranges.size()), range_end(ranges.size());
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    range_start[r] = n.start_ns[ranges[r]];
    range_end[r] = n.end_ns[ranges[r]];
  }
  place_rows(
      ranges.size(), range_start, range_end,
      [&](RowIndex r) {
        const std::int64_t g = n.global_tid[ranges[r]];
        if (g & kDeviceTrackBit) return TrackId{device_pid(static_cast<std::uint32_t>(pid_of(g))), tid_of(g)};
        return host_track(g);
      },
      "thread", [&](RowIndex r, TrackId track, TimeNs end) {
        const RowIndex i = ranges[r];
        const std::int64_t domain = n.domain_id[i];
        const std::string_view cat = domain == kKinetoCpuOpDomain            ? "cpu_op"
                                     : domain == kKinetoGpuAnnotationDomain ? "gpu_user_annotation"
                                     : domain == kKinetoPythonDomain        ? "python_function"
                                                                            : "user_annotation";
        slice(cat, t_.strings.get(n.text[i]), track, n.start_ns[i], end);
        buf_ += ", \"args\": {\"source\": \"nvtx\"";
        if (domain != 0 && !is_kineto_op_domain(domain)) {
          buf_ += ", \"domain\": ";
          append_json_string(buf_, t_.strings.get(domains.lookup(n.global_tid[i], domain)));
        }
        buf_ += "}}";
      });
  for (RowIndex i : marks) {
    begin_event();
    buf_ += "\"ph\": \"i\", \"s\": \"t\", \"cat\": \"nvtx_mark\", \"name\": ";
    append_json_string(buf_, t_.strings.get(n.text[i]));
    const TrackId track = host_track(n.global_tid[i]);
    fmt::format_to(std::back_inserter(buf_), ", \"pid\": {}, \"tid\": {}, \"ts\": ", track.pid, track.tid);
    append_us(buf_, n.start_ns[i] - base_);
    buf_ += "}";
    ++summary_.events;
    flush_if_large();
  }
}

void Writer::write_gpu_samples() {
  // GPU samples: one counter track per metric per device.
  const auto& g = t_.gpu_samples;
  for (RowIndex i = 0; i < g.size(); ++i) {
    const std::int64_t pid = device_pid(g.device_id[i]);
    auto counter = [&](std::string_view name, std::string_view series, auto value) {
      begin_event();
      buf_ += "\"ph\": \"C\", \"name\": ";
      append_json_string(buf_, name);
      fmt::format_to(std::back_inserter(buf_), ", \"pid\": {}, \"tid\": 0, \"ts\": ", pid);
      append_us(buf_, g.time_ns[i] - base_);
      fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"{}\": {}}}}}", series, value);
      ++summary_.events;
    };
    counter("SM clock (MHz)", "MHz", g.sm_clock_mhz[i]);
    counter("Memory clock (MHz)", "MHz", g.memory_clock_mhz[i]);
    counter("Power (W)", "W", static_cast<double>(g.power_mw[i]) / 1000.0);
    counter("Temperature (C)", "C", g.temperature_c[i]);
    counter("GPU utilization (%)", "%", g.gpu_util_percent[i]);
    counter("Memory utilization (%)", "%", g.memory_util_percent[i]);
    counter("Memory used (MiB)", "MiB", static_cast<double>(g.memory_used_bytes[i]) / (1 << 20));
    counter("Clock event reasons", "bits", g.clock_event_reasons[i]);
    if (g.pcie_tx_kbps[i] >= 0) counter("PCIe TX (KB/s)", "KB/s", g.pcie_tx_kbps[i]);
    if (g.pcie_rx_kbps[i] >= 0) counter("PCIe RX (KB/s)", "KB/s", g.pcie_rx_kbps[i]);
    flush_if_large();
  }
}

void Writer::write_names() {
  // Names: processes, devices, and every track written.
  for (const auto& p : t_.processes) process_name(p.pid, p.name.empty() ? fmt::format("process {}", p.pid) : p.name, p.pid);
  std::set<std::int64_t> device_pids;
  for (const std::uint32_t device : devices_seen_) {
    std::string name = fmt::format("GPU {}", device);
    for (const auto& d : t_.devices) {
      if (d.id == device && !d.name.empty()) name += " (" + d.name + ")";
    }
    device_pids.insert(device_pid_base_ + device);
    process_name(device_pid_base_ + device, name, 1'000'000'000'000 + device);
  }
  std::map<std::int64_t, std::string> thread_names;
  for (const auto& th : t_.threads) thread_names[th.global_tid] = th.name;
  for (const auto& [track, name] : named_tracks_) {
    std::string label = name;
    if (!device_pids.contains(track.pid) && track.tid < kLaneTidStride) {
      auto it = thread_names.find((track.pid << 24) | track.tid);
      if (it != thread_names.end() && !it->second.empty()) label = it->second;
    }
    begin_event();
    fmt::format_to(std::back_inserter(buf_), "\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": {{\"name\": ",
                   track.pid, track.tid);
    append_json_string(buf_, label);
    buf_ += "}}";
    begin_event();
    fmt::format_to(std::back_inserter(buf_), "\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": {}, \"tid\": {}, \"args\": {{\"sort_index\": {}}}}}",
                   track.pid, track.tid, track.tid);
  }
}

Result<ExportSummary> Writer::run() {
  write_header();
  // Host processes by OS pid; devices take pids as Kineto gives them (the device index) when no
  // host pid collides, else a high range.
  for (const auto& p : t_.processes) {
    if (p.pid < 4096) device_pid_base_ = 1'000'000'000;
  }
  // Correlation -> API call row per process, for flows.
  const auto& a = t_.api_calls;
  launch_of_.reserve(a.size());
  for (RowIndex i = 0; i < a.size(); ++i) {
    launch_of_.emplace((static_cast<std::uint64_t>(pid_of(a.global_tid[i])) << 32) | a.correlation_id[i], i);
  }
  write_kernels();
  write_copies_and_sets();
  write_graphs_and_syncs();
  write_api_calls();
  write_nvtx();
  write_gpu_samples();
  write_names();
  buf_ += "\n],\n\"traceName\": ";
  append_json_string(buf_, t_.source.path);
  buf_ += "\n}\n";
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
  if (!out_) return make_error(ErrorCode::kIo, "cannot write the export");
  return summary_;
}

// An ostream buffer that gzip-compresses into a file.
class GzipBuf : public std::streambuf {
 public:
  explicit GzipBuf(gzFile file) : file_(file) {}
  bool failed() const { return failed_; }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::streamsize done = 0;
    while (done < n) {
      const auto chunk = static_cast<unsigned>(std::min<std::streamsize>(n - done, 1 << 30));
      const int written = gzwrite(file_, s + done, chunk);
      if (written <= 0) {
        failed_ = true;
        return done;
      }
      done += written;
    }
    return done;
  }
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char ch = static_cast<char>(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

 private:
  gzFile file_;
  bool failed_ = false;
};

}  // namespace

Result<ExportFormat> parse_export_format(std::string_view text) {
  if (text == "perfetto") return ExportFormat::kPerfetto;
  if (text == "chrome") return ExportFormat::kChrome;
  return make_error(ErrorCode::kInvalidArgument, "unknown export format '" + std::string(text) + "' (perfetto or chrome)");
}

Result<ExportSummary> export_trace(const Trace& trace, const OpRuleSet& rules, std::ostream& out) {
  return Writer(trace, rules, out).run();
}

Result<ExportSummary> export_trace_file(const Trace& trace, const OpRuleSet& rules, const std::string& path,
                                        ExportFormat format) {
  (void)format;  // one dialect serves both viewers (see export.hpp)
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    gzFile file = gzopen(path.c_str(), "wb6");
    if (!file) return make_error(ErrorCode::kIo, path + ": cannot write");
    GzipBuf buf(file);
    std::ostream out(&buf);
    auto result = export_trace(trace, rules, out);
    const int closed = gzclose_w(file);
    if (!result) return result;
    if (buf.failed() || closed != Z_OK) return make_error(ErrorCode::kIo, path + ": cannot write");
    return result;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return make_error(ErrorCode::kIo, path + ": cannot write");
  auto result = export_trace(trace, rules, out);
  out.close();
  if (!result) return result;
  if (!out) return make_error(ErrorCode::kIo, path + ": cannot write");
  return result;
}

}  // namespace kernscope
