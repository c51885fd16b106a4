// Python binding of the kernscope library (nanobind): opening traces, event columns as numpy
// arrays that share the trace's memory, and every report and analysis as the CLI's JSON. The
// Python package (python/kernscope) turns the columns into pandas DataFrames.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <mutex>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "kernscope/analyze.hpp"
#include "kernscope/diagnosis.hpp"
#include "kernscope/export.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/render_findings.hpp"
#include "kernscope/reports.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/tail.hpp"
#include "kernscope/trace_filter.hpp"

#ifdef KERNSCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace nb = nanobind;
using namespace kernscope;

namespace {

// Raised as kernscope.Error with the CLI's one-line message.
struct KernscopeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T unwrap(Result<T> result) {
  if (!result) throw KernscopeError(result.error().message);
  return std::move(*result);
}

// A loaded trace, shared with every array handed to Python so views outlive the Python object.
struct PyTrace {
  std::shared_ptr<const Trace> trace;
};

template <class T>
nb::object view(const std::shared_ptr<const Trace>& owner, const std::vector<T>& column) {
  auto* keep = new std::shared_ptr<const Trace>(owner);
  nb::capsule capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<const Trace>*>(p); });
  const std::size_t shape[1] = {column.size()};
  return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<1>>(column.data(), 1, shape, capsule));
}

// PayloadKind is an enum class of bytes: handed out as uint8.
nb::object view(const std::shared_ptr<const Trace>& owner, const std::vector<PayloadKind>& column) {
  auto* keep = new std::shared_ptr<const Trace>(owner);
  nb::capsule capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<const Trace>*>(p); });
  const std::size_t shape[1] = {column.size()};
  return nb::cast(nb::ndarray<nb::numpy, const std::uint8_t, nb::ndim<1>>(
      reinterpret_cast<const std::uint8_t*>(column.data()), 1, shape, capsule));
}

nb::dict kernel_columns(const PyTrace& t) {
  const auto& k = t.trace->kernels;
  nb::dict d;
  d["start_ns"] = view(t.trace, k.start_ns);
  d["end_ns"] = view(t.trace, k.end_ns);
  d["global_pid"] = view(t.trace, k.global_pid);
  d["device"] = view(t.trace, k.device_id);
  d["context"] = view(t.trace, k.context_id);
  d["stream"] = view(t.trace, k.stream_id);
  d["correlation"] = view(t.trace, k.correlation_id);
  d["grid_x"] = view(t.trace, k.grid_x);
  d["grid_y"] = view(t.trace, k.grid_y);
  d["grid_z"] = view(t.trace, k.grid_z);
  d["block_x"] = view(t.trace, k.block_x);
  d["block_y"] = view(t.trace, k.block_y);
  d["block_z"] = view(t.trace, k.block_z);
  d["registers_per_thread"] = view(t.trace, k.registers_per_thread);
  d["static_smem_bytes"] = view(t.trace, k.static_smem_bytes);
  d["dynamic_smem_bytes"] = view(t.trace, k.dynamic_smem_bytes);
  d["graph_id"] = view(t.trace, k.graph_id);
  d["graph_node_id"] = view(t.trace, k.graph_node_id);
  d["external_id"] = view(t.trace, k.external_id);
  d["name"] = view(t.trace, k.demangled_name);
  d["short_name"] = view(t.trace, k.short_name);
  return d;
}

nb::dict memcpy_columns(const PyTrace& t) {
  const auto& m = t.trace->memcpys;
  nb::dict d;
  d["start_ns"] = view(t.trace, m.start_ns);
  d["end_ns"] = view(t.trace, m.end_ns);
  d["global_pid"] = view(t.trace, m.global_pid);
  d["device"] = view(t.trace, m.device_id);
  d["stream"] = view(t.trace, m.stream_id);
  d["correlation"] = view(t.trace, m.correlation_id);
  d["bytes"] = view(t.trace, m.bytes);
  d["copy_kind"] = view(t.trace, m.copy_kind);
  d["src_kind"] = view(t.trace, m.src_kind);
  d["dst_kind"] = view(t.trace, m.dst_kind);
  return d;
}

nb::dict memset_columns(const PyTrace& t) {
  const auto& m = t.trace->memsets;
  nb::dict d;
  d["start_ns"] = view(t.trace, m.start_ns);
  d["end_ns"] = view(t.trace, m.end_ns);
  d["global_pid"] = view(t.trace, m.global_pid);
  d["device"] = view(t.trace, m.device_id);
  d["stream"] = view(t.trace, m.stream_id);
  d["correlation"] = view(t.trace, m.correlation_id);
  d["bytes"] = view(t.trace, m.bytes);
  d["mem_kind"] = view(t.trace, m.mem_kind);
  return d;
}

nb::dict api_columns(const PyTrace& t) {
  const auto& a = t.trace->api_calls;
  nb::dict d;
  d["start_ns"] = view(t.trace, a.start_ns);
  d["end_ns"] = view(t.trace, a.end_ns);
  d["global_tid"] = view(t.trace, a.global_tid);
  d["correlation"] = view(t.trace, a.correlation_id);
  d["return_value"] = view(t.trace, a.return_value);
  d["name"] = view(t.trace, a.name);
  return d;
}

nb::dict nvtx_columns(const PyTrace& t) {
  const auto& n = t.trace->nvtx;
  nb::dict d;
  d["start_ns"] = view(t.trace, n.start_ns);
  d["end_ns"] = view(t.trace, n.end_ns);
  d["global_tid"] = view(t.trace, n.global_tid);
  d["event_type"] = view(t.trace, n.event_type);
  d["domain_id"] = view(t.trace, n.domain_id);
  d["text"] = view(t.trace, n.text);
  d["color"] = view(t.trace, n.color);
  d["payload_kind"] = view(t.trace, n.payload_kind);
  d["payload_int"] = view(t.trace, n.payload_int);
  d["payload_double"] = view(t.trace, n.payload_double);
  return d;
}

nb::dict sample_columns(const PyTrace& t) {
  const auto& g = t.trace->gpu_samples;
  nb::dict d;
  d["time_ns"] = view(t.trace, g.time_ns);
  d["device"] = view(t.trace, g.device_id);
  d["sm_clock_mhz"] = view(t.trace, g.sm_clock_mhz);
  d["memory_clock_mhz"] = view(t.trace, g.memory_clock_mhz);
  d["temperature_c"] = view(t.trace, g.temperature_c);
  d["gpu_util_percent"] = view(t.trace, g.gpu_util_percent);
  d["memory_util_percent"] = view(t.trace, g.memory_util_percent);
  d["power_mw"] = view(t.trace, g.power_mw);
  d["memory_used_bytes"] = view(t.trace, g.memory_used_bytes);
  d["pcie_tx_kbps"] = view(t.trace, g.pcie_tx_kbps);
  d["pcie_rx_kbps"] = view(t.trace, g.pcie_rx_kbps);
  d["clock_event_reasons"] = view(t.trace, g.clock_event_reasons);
  return d;
}

nb::dict graph_exec_columns(const PyTrace& t) {
  const auto& g = t.trace->graph_execs;
  nb::dict d;
  d["start_ns"] = view(t.trace, g.start_ns);
  d["end_ns"] = view(t.trace, g.end_ns);
  d["global_pid"] = view(t.trace, g.global_pid);
  d["device"] = view(t.trace, g.device_id);
  d["stream"] = view(t.trace, g.stream_id);
  d["correlation"] = view(t.trace, g.correlation_id);
  d["graph_id"] = view(t.trace, g.graph_id);
  d["graph_exec_id"] = view(t.trace, g.graph_exec_id);
  return d;
}

nb::dict info(const PyTrace& t) {
  const Trace& trace = *t.trace;
  nb::dict d;
  d["path"] = trace.source.path;
  d["format"] = trace.source.format;
  d["product_version"] = trace.source.product_version;
  d["notes"] = trace.notes;
  d["metadata"] = trace.source.metadata;
  if (trace.source.distributed) {
    nb::dict dist;
    dist["backend"] = trace.source.distributed->backend;
    dist["rank"] = trace.source.distributed->rank;
    dist["world_size"] = trace.source.distributed->world_size;
    d["distributed"] = dist;
  } else {
    d["distributed"] = nb::none();
  }
  nb::list devices;
  for (const auto& dev : trace.devices) {
    nb::dict x;
    x["id"] = dev.id;
    x["name"] = dev.name;
    x["sm_count"] = dev.sm_count;
    x["total_memory_bytes"] = dev.total_memory_bytes;
    x["compute_capability"] = std::to_string(dev.compute_major) + "." + std::to_string(dev.compute_minor);
    devices.append(x);
  }
  d["devices"] = devices;
  nb::list processes;
  for (const auto& p : trace.processes) processes.append(nb::make_tuple(p.pid, p.name));
  d["processes"] = processes;
  nb::list threads;
  for (const auto& th : trace.threads) threads.append(nb::make_tuple(th.global_tid, th.name));
  d["threads"] = threads;
  return d;
}

std::vector<std::string> strings(const PyTrace& t) {
  std::vector<std::string> out;
  out.reserve(t.trace->strings.size());
  for (StringId i = 0; i < t.trace->strings.size(); ++i) out.emplace_back(t.trace->strings.get(i));
  return out;
}

// The trace a report sees: the loaded one, or a filtered copy when filters are given.
std::shared_ptr<const Trace> filtered(const PyTrace& t, const std::optional<std::string>& filter_time,
                                      const std::optional<std::string>& filter_nvtx) {
  if (!filter_time && !filter_nvtx) return t.trace;
  FilterSpec spec;
  if (filter_time) spec.time = unwrap(parse_time_window(*filter_time));
  if (filter_nvtx) spec.nvtx = *filter_nvtx;
  const EventFilter filter = unwrap(resolve_filter(*t.trace, spec));
  auto copy = std::make_shared<Trace>(*t.trace);
  apply_filter(*copy, filter);
  return copy;
}

std::string stats(const PyTrace& t, const std::string& report, const std::optional<std::string>& filter_time,
                  const std::optional<std::string>& filter_nvtx, const std::string& time_unit) {
  const ReportRequest request = unwrap(parse_report(report));
  const TimeUnit unit = unwrap(parse_time_unit(time_unit));
  auto trace = filtered(t, filter_time, filter_nvtx);
  const Table table = unwrap(run_report(*trace, request));
  std::ostringstream out;
  render(out, table, RenderOptions{Format::kJson, unit});
  return out.str();
}

std::string tail(const PyTrace& t, const std::string& by, std::size_t limit) {
  const TailSubject subject = unwrap(parse_tail_subject(by));
  const TailResult result = unwrap(tail_statistics(*t.trace, subject));
  const RenderOptions options{Format::kJson, TimeUnit::kNs};
  std::ostringstream out;
  out << "{\"by_total\": ";
  render(out, tail_table(result.by_total, subject, false, limit), options);
  out << ", \"tail_candidates\": ";
  render(out, tail_table(result.by_tail_score, subject, true, limit), options);
  out << "}";
  return out.str();
}

std::string analyze(const PyTrace& t) {
  const AnalyzeOptions options = unwrap(validate(AnalyzeOptions{}));
  const Trace& trace = *t.trace;
  auto findings = run_nsys_rules(trace, options);
  if (auto steps = analyze_steps(trace, OpRuleSet::builtin(), {})) {
    for (auto& f : run_llm_rules(trace, *steps, options)) findings.push_back(std::move(f));
  }
  return render_findings_json(findings);
}

std::string report(const PyTrace& t) {
  const Diagnosis d = unwrap(diagnose(*t.trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{}));
  return render_diagnosis_json(d);
}

void nvtx_push(const std::string& name, const std::optional<std::string>& domain) {
#ifdef KERNSCOPE_HAVE_NVTX
  if (domain) {
    // Domains live for the process: create each once.
    static std::mutex mutex;
    static std::map<std::string, nvtxDomainHandle_t> domains;
    nvtxDomainHandle_t handle;
    {
      std::lock_guard lock(mutex);
      auto [it, inserted] = domains.emplace(*domain, nullptr);
      if (inserted) it->second = nvtxDomainCreateA(domain->c_str());
      handle = it->second;
    }
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name.c_str();
    nvtxDomainRangePushEx(handle, &attributes);
  } else {
    nvtxRangePushA(name.c_str());
  }
#else
  (void)name;
  (void)domain;
#endif
}

void nvtx_pop(const std::optional<std::string>& domain) {
#ifdef KERNSCOPE_HAVE_NVTX
  if (domain) {
    nvtxDomainHandle_t handle = nvtxDomainCreateA(domain->c_str());  // returns the existing domain
    nvtxDomainRangePop(handle);
  } else {
    nvtxRangePop();
  }
#else
  (void)domain;
#endif
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "kernscope: GPU trace analysis for LLM inference (C++ core)";
  nb::exception<KernscopeError>(m, "Error");

  nb::class_<PyTrace>(m, "Trace")
      .def("kernel_columns", &kernel_columns)
      .def("memcpy_columns", &memcpy_columns)
      .def("memset_columns", &memset_columns)
      .def("api_columns", &api_columns)
      .def("nvtx_columns", &nvtx_columns)
      .def("sample_columns", &sample_columns)
      .def("graph_exec_columns", &graph_exec_columns)
      .def("info", &info)
      .def("strings", &strings)
      .def("stats", &stats, nb::arg("report"), nb::arg("filter_time") = nb::none(), nb::arg("filter_nvtx") = nb::none(),
           nb::arg("time_unit") = "ns")
      .def("tail", &tail, nb::arg("by") = "kernel", nb::arg("limit") = 20)
      .def("analyze", &analyze)
      .def("report", &report)
      .def("export", [](const PyTrace& t, const std::string& path, const std::string& format) {
        const ExportFormat f = unwrap(parse_export_format(format));
        const ExportSummary s = unwrap(export_trace_file(*t.trace, OpRuleSet::builtin(), path, f));
        return nb::make_tuple(s.events, s.flows, s.overlap_tracks);
      }, nb::arg("path"), nb::arg("format") = "perfetto");

  m.def("open", [](const std::string& path) {
    Trace trace;
    {
      nb::gil_scoped_release release;  // reading takes a while; other Python threads may run
      auto result = open_trace(path);
      if (!result) {
        nb::gil_scoped_acquire acquire;
        throw KernscopeError(result.error().message);
      }
      trace = std::move(*result);
    }
    return PyTrace{std::make_shared<const Trace>(std::move(trace))};
  }, nb::arg("path"));
  m.def("report_names", &report_names);
  m.def("nvtx_push", &nvtx_push, nb::arg("name"), nb::arg("domain") = nb::none());
  m.def("nvtx_pop", &nvtx_pop, nb::arg("domain") = nb::none());
#ifdef KERNSCOPE_HAVE_NVTX
  m.attr("nvtx_available") = true;
#else
  m.attr("nvtx_available") = false;
#endif
}
