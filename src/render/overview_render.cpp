// `kernscope info` as text and JSON.
#include <fmt/format.h>

#include <algorithm>

#include "render/tracer_cost_render.hpp"
#include "render/document_render.hpp"
#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope {

std::string render_overview_text(const TraceOverview& o, bool all) {
  std::string out;
  auto put = [&out](std::string s) { out += s; };
  if (o.source.format == "nsys-sqlite") {
    put(fmt::format("Trace:    {}\nFormat:   {} (Nsight Systems {}, export schema {})\n", o.source.path, o.source.format,
                    o.source.product_version.empty() ? "?" : o.source.product_version,
                    o.source.schema_version.empty() ? "?" : o.source.schema_version));
  } else {
    put(fmt::format("Trace:    {}\nFormat:   {}\n", o.source.path, o.source.format));
  }
  if (o.source.distributed) {
    const auto& d = *o.source.distributed;
    put(fmt::format("Rank:     {} of {} ({})\n", d.rank, d.world_size, d.backend.empty() ? "?" : d.backend));
  }
  for (const auto& [key, value] : o.source.metadata) put(fmt::format("  {}: {}\n", key, value));
  put(fmt::format("Span:     {} ns .. {} ns ({:.3f} s)\n", o.first_ns, o.last_ns, static_cast<double>(o.last_ns - o.first_ns) / 1e9));
  if (o.declarations_outside > 0) {
    put(fmt::format("          (left out: {} NVTX declaration{} (domain creations, names) dated {} ns .. {} ns, when the "
                    "program declared them)\n",
                    o.declarations_outside, o.declarations_outside == 1 ? "" : "s", o.declarations_first_ns,
                    o.declarations_last_ns));
  }
  if (o.devices.empty()) put("Devices:  none recorded\n");
  else put("Devices:\n");
  for (const auto& d : o.devices) {
    put(fmt::format("  [{}] {}{}, {} SMs, {:.1f} GiB{}, compute capability {}.{}\n", d.id, d.name,
                    d.chip_name.empty() ? "" : " (" + d.chip_name + ")", d.sm_count,
                    static_cast<double>(d.total_memory_bytes) / (1 << 30),
                    d.memory_bandwidth_bytes_per_s > 0
                        ? fmt::format(", {:.0f} GB/s", static_cast<double>(d.memory_bandwidth_bytes_per_s) / 1e9)
                        : "",
                    d.compute_major, d.compute_minor));
  }
  put("Events:\n");
  for (const auto& c : o.counts) put(fmt::format("  {:<11} {}\n", c.kind, c.present ? fmt::format("{}", c.count) : "absent"));
  if (o.graph_replay_kernels > 0) {
    put(fmt::format("  graph launches {}, kernels of their replays {} (by the launch's correlation id; no node ids)\n",
                    o.graph_launches, o.graph_replay_kernels));
  } else if (o.graph_launches || o.graph_node_kernels) {
    put(fmt::format("  graph launches {}, kernels from graph nodes {}\n", o.graph_launches, o.graph_node_kernels));
  }
  // Processes and threads with GPU or CUDA activity; the idle rest only with --all.
  const auto& processes = all ? o.processes : o.active_processes;
  const auto& threads = all ? o.threads : o.active_threads;
  if (!processes.empty()) put(all ? "Processes:\n" : "Processes with GPU or CUDA activity:\n");
  for (const auto& p : processes) {
    put(fmt::format("  {} {}\n", p.pid, p.name));
    for (const auto& t : threads) {
      if (pid_of(t.global_tid) == p.pid) put(fmt::format("    thread {} {}\n", tid_of(t.global_tid), t.name));
    }
  }
  const std::size_t hidden_processes = o.processes.size() - processes.size(), hidden_threads = o.threads.size() - threads.size();
  if (hidden_processes + hidden_threads > 0) {
    put(fmt::format("  ({} more processes and {} more threads without CUDA or NVTX activity: --all lists them)\n",
                    hidden_processes, hidden_threads));
  }
  constexpr std::size_t kTopRanges = 15;
  if (!o.top_level_ranges.empty()) {
    put("Top-level NVTX ranges (by total time):\n");
    const std::size_t shown = all ? o.top_level_ranges.size() : std::min(kTopRanges, o.top_level_ranges.size());
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& r = o.top_level_ranges[i];
      put(fmt::format("  {:>6} x {:<40} {:>14.3f} ms\n", r.count, r.name, static_cast<double>(r.total_ns) / 1e6));
    }
    if (shown < o.top_level_ranges.size()) {
      put(fmt::format("  ({} more range names: --all lists them)\n", o.top_level_ranges.size() - shown));
    }
  }
  if (o.tracer_cost) {
    put("Tracer cost:\n");
    for (const auto& line : tracer_cost_sentences(*o.tracer_cost)) put("  " + line + '\n');
  }
  if (!o.notes.empty()) {
    put("Missing or degraded:\n");
    // Data lost or a part not read is said as such; what a source simply lacks is listed plainly.
    for (const auto& n : o.notes) {
      const std::string_view tag = n.severity == NoteSeverity::kError ? "(error) " : n.severity == NoteSeverity::kDataLoss ? "(data loss) " : "";
      put("  - " + std::string(tag) + n.text + '\n');
    }
  }
  return out;
}

void write_overview_json(JsonWriter& json, const TraceOverview& o) {
  json.begin_object()
      .member("path", o.source.path)
      .member("format", o.source.format)
      .member("product_version", o.source.product_version)
      .member("schema_version", o.source.schema_version)
      .member("session_start_utc_ns", o.source.session_start_utc_ns)
      .member("first_ns", o.first_ns)
      .member("last_ns", o.last_ns);
  if (o.declarations_outside > 0) {
    json.key("span_left_out")
        .begin_object()
        .member("nvtx_declarations", o.declarations_outside)
        .member("first_ns", o.declarations_first_ns)
        .member("last_ns", o.declarations_last_ns)
        .end_object();
  }
  json.key("devices").begin_array();
  for (const auto& d : o.devices) {
    json.begin_object()
        .member("id", d.id)
        .member("name", d.name)
        .member("chip", d.chip_name)
        .member("sm_count", d.sm_count)
        .member("memory_bytes", d.total_memory_bytes)
        .member("memory_bandwidth_bytes_per_s", d.memory_bandwidth_bytes_per_s)
        .member("clock_rate_hz", d.clock_rate_hz)
        .member("compute_capability", fmt::format("{}.{}", d.compute_major, d.compute_minor))
        .end_object();
  }
  json.end_array();
  json.key("counts").begin_object();
  for (const auto& c : o.counts) {
    json.key(c.kind);
    if (c.present) json.value(c.count);
    else json.null();
  }
  json.end_object();
  json.member("graph_launches", o.graph_launches).member("graph_node_kernels", o.graph_node_kernels);
  json.member("graph_replay_kernels", o.graph_replay_kernels);
  json.key("processes").begin_array();
  for (const auto& p : o.processes) json.begin_object().member("pid", p.pid).member("name", p.name).end_object();
  json.end_array();
  json.key("threads").begin_array();
  for (const auto& t : o.threads) {
    json.begin_object().member("pid", pid_of(t.global_tid)).member("tid", tid_of(t.global_tid)).member("name", t.name).end_object();
  }
  json.end_array();
  json.key("top_level_nvtx_ranges").begin_array();
  for (const auto& r : o.top_level_ranges) {
    json.begin_object().member("name", r.name).member("count", r.count).member("total_ns", r.total_ns).end_object();
  }
  json.end_array();
  // Notes as Perfetto's stats table keeps them: each with its kind and severity, then counted by kind.
  write_notes_json(json.key("notes"), o.notes);
  json.key("notes_by_kind").begin_array();
  for (const auto& c : count_notes(o.notes)) {
    json.begin_object().member("kind", c.kind).member("severity", std::string(severity_name(c.severity)));
    json.member("notes", c.notes).member("count", c.count).end_object();
  }
  json.end_array();
  if (o.tracer_cost) write_tracer_cost_json(json.key("tracer_cost"), *o.tracer_cost);
  json.end_object();
}

std::string render_overview_json(const TraceOverview& o) {
  JsonWriter json;
  write_overview_json(json, o);
  return json.finish();
}

}  // namespace kernscope
