// kernscope info: what the trace holds and what it lacks.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "kernscope/open.hpp"
#include "kernscope/overview.hpp"

namespace kernscope::cli {
namespace {

struct InfoOptions {
  std::string trace;
  std::string format = "text";
};

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += c;
    }
  }
  return out;
}

void print_text(const TraceOverview& o) {
  if (o.source.format == "nsys-sqlite") {
    std::cout << fmt::format("Trace:    {}\nFormat:   {} (Nsight Systems {}, export schema {})\n", o.source.path,
                             o.source.format, o.source.product_version.empty() ? "?" : o.source.product_version,
                             o.source.schema_version.empty() ? "?" : o.source.schema_version);
  } else {
    std::cout << fmt::format("Trace:    {}\nFormat:   {}\n", o.source.path, o.source.format);
  }
  if (o.source.distributed) {
    const auto& d = *o.source.distributed;
    std::cout << fmt::format("Rank:     {} of {} ({})\n", d.rank, d.world_size, d.backend.empty() ? "?" : d.backend);
  }
  for (const auto& [key, value] : o.source.metadata) std::cout << fmt::format("  {}: {}\n", key, value);
  std::cout << fmt::format("Span:     {} ns .. {} ns ({:.3f} s)\n", o.first_ns, o.last_ns,
                           static_cast<double>(o.last_ns - o.first_ns) / 1e9);
  std::cout << "Devices:\n";
  for (const auto& d : o.devices) {
    std::cout << fmt::format("  [{}] {}{}, {} SMs, {:.1f} GiB{}, compute capability {}.{}\n", d.id, d.name,
                             d.chip_name.empty() ? "" : " (" + d.chip_name + ")", d.sm_count,
                             static_cast<double>(d.total_memory_bytes) / (1 << 30),
                             d.memory_bandwidth_bytes_per_s > 0
                                 ? fmt::format(", {:.0f} GB/s", static_cast<double>(d.memory_bandwidth_bytes_per_s) / 1e9)
                                 : "",
                             d.compute_major, d.compute_minor);
  }
  std::cout << "Events:\n";
  for (const auto& c : o.counts) {
    std::cout << fmt::format("  {:<11} {}\n", c.kind, c.present ? fmt::format("{}", c.count) : "absent");
  }
  if (o.graph_launches || o.graph_node_kernels) {
    std::cout << fmt::format("  graph launches {}, kernels from graph nodes {}\n", o.graph_launches, o.graph_node_kernels);
  }
  std::cout << "Processes:\n";
  for (const auto& p : o.processes) {
    std::cout << fmt::format("  {} {}\n", p.pid, p.name);
    for (const auto& t : o.threads) {
      if (pid_of(t.global_tid) == p.pid) std::cout << fmt::format("    thread {} {}\n", tid_of(t.global_tid), t.name);
    }
  }
  if (!o.top_level_ranges.empty()) {
    std::cout << "Top-level NVTX ranges:\n";
    for (const auto& r : o.top_level_ranges) {
      std::cout << fmt::format("  {:>6} x {:<40} {:>14.3f} ms\n", r.count, r.name, static_cast<double>(r.total_ns) / 1e6);
    }
  }
  if (!o.missing.empty()) {
    std::cout << "Missing or degraded:\n";
    for (const auto& m : o.missing) std::cout << "  - " << m << '\n';
  }
}

void print_json(const TraceOverview& o) {
  std::ostringstream out;
  out << "{\n";
  out << fmt::format("  \"path\": \"{}\",\n  \"format\": \"{}\",\n  \"product_version\": \"{}\",\n  \"schema_version\": \"{}\",\n",
                     json_escape(o.source.path), o.source.format, json_escape(o.source.product_version),
                     json_escape(o.source.schema_version));
  out << fmt::format("  \"session_start_utc_ns\": {},\n  \"first_ns\": {},\n  \"last_ns\": {},\n",
                     o.source.session_start_utc_ns, o.first_ns, o.last_ns);
  out << "  \"devices\": [";
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    const auto& d = o.devices[i];
    out << (i ? ", " : "") << fmt::format("{{\"id\": {}, \"name\": \"{}\", \"chip\": \"{}\", \"sm_count\": {}, \"memory_bytes\": {}, \"memory_bandwidth_bytes_per_s\": {}, \"clock_rate_hz\": {}, \"compute_capability\": \"{}.{}\"}}",
                                          d.id, json_escape(d.name), json_escape(d.chip_name), d.sm_count, d.total_memory_bytes,
                                          d.memory_bandwidth_bytes_per_s, d.clock_rate_hz, d.compute_major, d.compute_minor);
  }
  out << "],\n  \"counts\": {";
  for (std::size_t i = 0; i < o.counts.size(); ++i) {
    out << (i ? ", " : "") << fmt::format("\"{}\": {}", o.counts[i].kind, o.counts[i].present ? std::to_string(o.counts[i].count) : "null");
  }
  out << fmt::format("}},\n  \"graph_launches\": {},\n  \"graph_node_kernels\": {},\n", o.graph_launches, o.graph_node_kernels);
  out << "  \"processes\": [";
  for (std::size_t i = 0; i < o.processes.size(); ++i) {
    out << (i ? ", " : "") << fmt::format("{{\"pid\": {}, \"name\": \"{}\"}}", o.processes[i].pid, json_escape(o.processes[i].name));
  }
  out << "],\n  \"threads\": [";
  for (std::size_t i = 0; i < o.threads.size(); ++i) {
    const auto& t = o.threads[i];
    out << (i ? ", " : "") << fmt::format("{{\"pid\": {}, \"tid\": {}, \"name\": \"{}\"}}", pid_of(t.global_tid), tid_of(t.global_tid), json_escape(t.name));
  }
  out << "],\n  \"top_level_nvtx_ranges\": [";
  for (std::size_t i = 0; i < o.top_level_ranges.size(); ++i) {
    const auto& r = o.top_level_ranges[i];
    out << (i ? ", " : "") << fmt::format("{{\"name\": \"{}\", \"count\": {}, \"total_ns\": {}}}", json_escape(r.name), r.count, r.total_ns);
  }
  out << "],\n  \"missing\": [";
  for (std::size_t i = 0; i < o.missing.size(); ++i) out << (i ? ", " : "") << '"' << json_escape(o.missing[i]) << '"';
  out << "]\n}\n";
  std::cout << out.str();
}

}  // namespace

Command add_info(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "What a trace holds: source, span, devices, counts, NVTX, what is missing");
  cmd->add_option("-f,--format", options->format, "text or json")->capture_default_str();
  cmd->add_option("trace", options->trace, "trace file")->required();
  return [options]() -> int {
    if (options->format != "text" && options->format != "json") {
      return fail(Error{ErrorCode::kInvalidArgument, "unknown format '" + options->format + "' (expected text or json)"});
    }
    auto trace = open_trace(options->trace);
    if (!trace) return fail(trace.error());
    const auto overview = describe(*trace);
    if (options->format == "json") print_json(overview);
    else print_text(overview);
    return 0;
  };
}

}  // namespace kernscope::cli
