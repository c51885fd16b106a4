// Python binding of the kernscope library (nanobind): opening traces, event columns as numpy
// arrays that share the trace's memory, and every analysis of the registry (kernscope/analysis.hpp)
// run through the same path as the CLI: tables as columns, documents as the CLI's JSON. The
// Python package (python/kernscope) turns the columns into pandas DataFrames.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <set>
#include <unordered_map>
#include <mutex>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "base/version.hpp"
#include "fleet_digest_binding.hpp"
#include "fleet_reduce_binding.hpp"
#include "note_dicts.hpp"
#include "kernscope/column_defs.hpp"
#include "kernscope/analysis.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/reports.hpp"
#include "render/json_writer.hpp"

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

// A dictionary-coded column (trace.hpp: thread, process, device, context, stream and graph node ids,
// API call names) has no contiguous values to view: handed out as a copy of its values, owned by
// the array.
template <class T>
nb::object view(const std::shared_ptr<const Trace>&, const DictColumn<T>& column) {
  auto* values = new std::vector<T>(column.to_vector());
  nb::capsule capsule(values, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {values->size()};
  return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<1>>(values->data(), 1, shape, capsule));
}

// PayloadKind is an enum class of bytes: handed out as uint8.
nb::object view(const std::shared_ptr<const Trace>& owner, const std::vector<PayloadKind>& column) {
  auto* keep = new std::shared_ptr<const Trace>(owner);
  nb::capsule capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<const Trace>*>(p); });
  const std::size_t shape[1] = {column.size()};
  return nb::cast(nb::ndarray<nb::numpy, const std::uint8_t, nb::ndim<1>>(
      reinterpret_cast<const std::uint8_t*>(column.data()), 1, shape, capsule));
}

// An event kind's columns as a dict of arrays (zero-copy views but for the dictionary-coded ones), named and ordered as
// kernscope/column_defs.hpp says (columns without a Python name are not handed out).
template <class Columns>
nb::dict columns_dict(const PyTrace& t, const Columns& columns) {
  nb::dict d;
  for_each_column_def<Columns>([&](const auto& def) {
    if (def.python) d[def.python] = view(t.trace, columns.*def.member);
  });
  return d;
}

nb::dict info(const PyTrace& t) {
  const Trace& trace = *t.trace;
  nb::dict d;
  d["path"] = trace.source.path;
  d["format"] = trace.source.format;
  d["product_version"] = trace.source.product_version;
  d["notes"] = python::note_dicts(trace.notes);  // as `kernscope info --format json` writes them
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

// A result table as Python columns, named by column_key (snake_case with the unit as a suffix:
// one naming scheme for every DataFrame; the CLI's display headers stay for text and csv), values
// unscaled (ns whatever time unit the text would use): whole-number columns as int64 arrays,
// numeric ones as float64, yes/no columns as bool, anything else (text, or cells that can be
// empty) as a list of Python objects.
nb::dict table_columns(const Table& table) {
  nb::dict columns;
  std::set<std::string> taken;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    bool all_int = true, all_number = true, all_yes_no = true;
    for (const auto& row : table.rows) {
      const Cell& cell = row[c];
      if (!std::holds_alternative<std::int64_t>(cell)) all_int = false;
      if (!std::holds_alternative<std::int64_t>(cell) && !std::holds_alternative<double>(cell)) all_number = false;
      const auto* text = std::get_if<std::string>(&cell);
      if (!text || (*text != "yes" && *text != "no")) all_yes_no = false;
    }
    std::string header = column_key(table.columns[c]);
    for (int n = 2; !taken.insert(header).second; ++n) header = column_key(table.columns[c]) + "_" + std::to_string(n);
    if (all_yes_no && !table.rows.empty()) {
      nb::list values;
      for (const auto& row : table.rows) values.append(std::get<std::string>(row[c]) == "yes");
      columns[header.c_str()] = values;
      continue;
    }
    if (all_int && !table.rows.empty()) {
      auto* values = new std::vector<std::int64_t>();
      for (const auto& row : table.rows) values->push_back(std::get<std::int64_t>(row[c]));
      nb::capsule owner(values, [](void* p) noexcept { delete static_cast<std::vector<std::int64_t>*>(p); });
      const std::size_t shape[1] = {values->size()};
      columns[header.c_str()] = nb::cast(nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(values->data(), 1, shape, owner));
    } else if (all_number && !table.rows.empty()) {
      auto* values = new std::vector<double>();
      for (const auto& row : table.rows) {
        const Cell& cell = row[c];
        values->push_back(std::holds_alternative<double>(cell) ? std::get<double>(cell)
                                                                : static_cast<double>(std::get<std::int64_t>(cell)));
      }
      nb::capsule owner(values, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
      const std::size_t shape[1] = {values->size()};
      columns[header.c_str()] = nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<1>>(values->data(), 1, shape, owner));
    } else {
      nb::list values;
      for (const auto& row : table.rows) {
        const Cell& cell = row[c];
        if (const auto* i = std::get_if<std::int64_t>(&cell)) values.append(*i);
        else if (const auto* d = std::get_if<double>(&cell)) values.append(*d);
        else if (const auto* text = std::get_if<std::string>(&cell)) values.append(nb::str(text->c_str(), text->size()));
        else values.append(nb::none());
      }
      columns[header.c_str()] = values;
    }
  }
  return columns;
}

template <class T>
nb::object owned_array(std::vector<T>&& values) {
  auto* kept = new std::vector<T>(std::move(values));
  nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {kept->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(kept->data(), 1, shape, owner));
}

// Per GPU operation: its operation class (kernels), the step it belongs to and that step's phase,
// from the same step analysis `kernscope steps` runs, so frames can be grouped by them.
nb::dict operation_context(const PyTrace& t) {
  const Trace& trace = *t.trace;
  const auto& k = trace.kernels;
  Result<StepAnalysis> steps_result;
  {
    nb::gil_scoped_release release;
    steps_result = analyze_steps(trace, OpRuleSet::builtin(), {});
  }
  StepAnalysis steps = steps_result ? std::move(*steps_result) : StepAnalysis{};
  if (!steps_result) {  // no kernels: every operation is outside any step
    steps.kernel_step.assign(k.size(), -1);
    steps.memcpy_step.assign(trace.memcpys.size(), -1);
    steps.memset_step.assign(trace.memsets.size(), -1);
  }
  std::vector<std::string> class_names;
  std::map<std::string, std::int32_t> class_code;
  std::unordered_map<StringId, std::int32_t> code_of_name;
  std::vector<std::int32_t> kernel_class(k.size());
  for (RowIndex i = 0; i < k.size(); ++i) {
    auto it = code_of_name.find(k.demangled_name[i]);
    if (it == code_of_name.end()) {
      const std::string cls = OpRuleSet::builtin().classify(trace.strings.get(k.demangled_name[i])).first;
      auto [c, added] = class_code.emplace(cls, static_cast<std::int32_t>(class_names.size()));
      if (added) class_names.push_back(cls);
      it = code_of_name.emplace(k.demangled_name[i], c->second).first;
    }
    kernel_class[i] = it->second;
  }
  std::vector<std::int8_t> kernel_phase(k.size(), -1);
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (steps.kernel_step[i] >= 0) kernel_phase[i] = static_cast<std::int8_t>(steps.steps[static_cast<std::size_t>(steps.kernel_step[i])].phase);
  }
  nb::dict d;
  d["kernel_class"] = owned_array(std::move(kernel_class));
  d["class_names"] = class_names;
  d["kernel_phase"] = owned_array(std::move(kernel_phase));
  d["phase_names"] = std::vector<std::string>{std::string(phase_name(Phase::kPrefill)), std::string(phase_name(Phase::kDecode)),
                                              std::string(phase_name(Phase::kUnknown)), std::string(phase_name(Phase::kMixed))};
  d["kernel_step"] = owned_array(std::move(steps.kernel_step));
  d["memcpy_step"] = owned_array(std::move(steps.memcpy_step));
  d["memset_step"] = owned_array(std::move(steps.memset_step));
  return d;
}

// The analyses of the library's registry, for Python to build Trace.NAME() from.
nb::list analyses() {
  nb::list out;
  for (const auto& spec : analysis_specs()) {
    nb::dict d;
    d["name"] = spec.name;
    d["summary"] = spec.summary;
    d["formats"] = spec.formats;
    d["time_unit"] = spec.time_unit;
    d["filters"] = spec.filters;
    d["shape"] = spec.shape == ResultShape::kTables ? "tables" : "document";
    d["min_traces"] = spec.min_traces;
    d["max_traces"] = spec.max_traces;  // 0: no upper bound; 1: a Trace method
    d["one_trace_too"] = spec.one_trace_too;  // a Trace method too
    d["reads_paths"] = spec.reads_paths;      // given paths, run_paths (each trace read and freed in C++)
    d["trace_group_options"] = spec.trace_group_options;
    nb::list options;
    for (const auto& o : spec.options) {
      static const char* kKinds[] = {"text", "integer", "number", "flag", "list"};
      nb::dict option;
      option["name"] = o.name;
      option["kind"] = kKinds[static_cast<int>(o.kind)];
      option["default"] = o.default_value;
      option["help"] = o.help;
      option["required"] = o.required;
      options.append(option);
    }
    d["options"] = options;
    out.append(d);
  }
  return out;
}

AnalysisRequest request_of(const std::string& name, const std::map<std::string, std::vector<std::string>>& options,
                           const std::string& format, const std::string& time_unit, const std::string& filter_time,
                           const std::string& filter_nvtx) {
  AnalysisRequest request;
  request.analysis = name;
  request.options = options;
  request.format = format;
  request.time_unit = time_unit;
  request.filter_time = filter_time;
  request.filter_nvtx = filter_nvtx;
  return request;
}

// An analysis's tables as Python dicts: report, title and columns.
// A document's values as Python objects (dicts, lists, str, int, float, bool, None), made from the
// document itself: no JSON text is written or parsed on the way.
nb::object python_of(const JsonValue& value) {
  return std::visit(
      [](const auto& v) -> nb::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return nb::none();
        } else if constexpr (std::is_same_v<T, JsonValue::Array>) {
          nb::list list;
          for (const auto& item : v) list.append(python_of(item));
          return list;
        } else if constexpr (std::is_same_v<T, JsonValue::Object>) {
          nb::dict dict;
          for (const auto& [key, item] : v) dict[nb::str(key.data(), key.size())] = python_of(item);
          return dict;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return nb::str(v.data(), v.size());
        } else {
          return nb::cast(v);
        }
      },
      value.v);
}

nb::list tables_of(const AnalysisOutput& output) {
  nb::list tables;
  for (const auto& table : output.tables) {
    nb::dict d;
    d["report"] = table.report;
    d["title"] = table.title;
    d["columns"] = table_columns(table);
    tables.append(d);
  }
  return tables;
}

// Runs one analysis of the registry: (tables, text, messages, what was written or None, document values or None).
nb::tuple run(const PyTrace& t, const std::string& name, const std::map<std::string, std::vector<std::string>>& options,
              const std::string& format, const std::string& time_unit, const std::string& filter_time,
              const std::string& filter_nvtx) {
  const AnalysisRequest request = request_of(name, options, format, time_unit, filter_time, filter_nvtx);
  Result<AnalysisOutput> result;
  {
    nb::gil_scoped_release release;
    result = run_analysis(*t.trace, request, /*apply_filters=*/true);
  }
  const AnalysisOutput output = unwrap(std::move(result));
  if (!time_unit.empty()) unwrap(parse_time_unit(time_unit));  // refused when unknown; frames stay in ns
  nb::object document = output.object ? python_of(*output.object) : nb::none();
  nb::object summary = output.summary ? python_of(*output.summary) : nb::none();
  return nb::make_tuple(tables_of(output), output.text, output.messages, summary, document);
}

// (tables, text, messages, summary, exit code) of an analysis over several traces.
nb::tuple analysis_result(Result<AnalysisOutput> result, const std::string& time_unit) {
  const AnalysisOutput output = unwrap(std::move(result));
  if (!time_unit.empty()) unwrap(parse_time_unit(time_unit));  // refused when unknown; frames stay in ns
  nb::object summary = output.summary ? python_of(*output.summary) : nb::none();
  return nb::make_tuple(tables_of(output), output.text, output.messages, summary, output.exit_code);
}

// Runs one multi-trace analysis of the registry (diff, compare) on groups of loaded traces:
// (tables, text, messages, what was written or None, exit_code).
nb::tuple run_groups(const std::string& name, const std::vector<std::vector<PyTrace>>& groups,
                     const std::vector<std::string>& labels, const std::map<std::string, std::vector<std::string>>& options,
                     const std::string& format, const std::string& time_unit, const std::string& filter_time,
                     const std::string& filter_nvtx) {
  const AnalysisRequest request = request_of(name, options, format, time_unit, filter_time, filter_nvtx);
  std::vector<TraceGroup> trace_groups;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    TraceGroup g;
    g.label = i < labels.size() ? labels[i] : std::string();
    for (const auto& t : groups[i]) g.runs.push_back(t.trace.get());
    trace_groups.push_back(std::move(g));
  }
  Result<AnalysisOutput> result;
  {
    nb::gil_scoped_release release;
    result = run_analysis(trace_groups, request, /*apply_filters=*/true);
  }
  return analysis_result(std::move(result), time_unit);
}

// An analysis over paths (AnalysisSpec::reads_paths): the traces are read in C++ as the CLI reads
// them, each freed once digested, instead of opened whole in Python first.
nb::tuple run_paths(const std::string& name, const std::vector<std::vector<std::string>>& path_groups,
                    const std::map<std::string, std::vector<std::string>>& options, const std::string& format,
                    const std::string& time_unit) {
  const AnalysisRequest request = request_of(name, options, format, time_unit, "", "");
  Result<AnalysisOutput> result;
  {
    nb::gil_scoped_release release;
    result = run_analysis(path_groups, request);
  }
  return analysis_result(std::move(result), time_unit);
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
  m.attr("__version__") = kernscope::kVersion;  // project(kernscope VERSION ...): its one home
  auto error = nb::exception<KernscopeError>(m, "Error");
  kernscope::python::bind_fleet_digest(m, error);
  kernscope::python::bind_fleet_reduce(m);

  nb::class_<PyTrace>(m, "Trace")
      .def("kernel_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->kernels); })
      .def("memcpy_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->memcpys); })
      .def("memset_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->memsets); })
      .def("api_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->api_calls); })
      .def("nvtx_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->nvtx); })
      .def("sample_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->gpu_samples); })
      .def("graph_exec_columns", [](const PyTrace& t) { return columns_dict(t, t.trace->graph_execs); })
      .def("info", &info)
      .def("strings", &strings)
      .def("operation_context", &operation_context)
      .def("run", &run, nb::arg("name"), nb::arg("options"), nb::arg("format") = "", nb::arg("time_unit") = "",
           nb::arg("filter_time") = "", nb::arg("filter_nvtx") = "");

  m.def("open", [](const std::string& path, bool partial) {
    Trace trace;
    {
      nb::gil_scoped_release release;  // reading takes a while; other Python threads may run
      OpenOptions options;
      options.partial = partial;
      auto result = open_trace(path, options);
      if (!result) {
        nb::gil_scoped_acquire acquire;
        throw KernscopeError(result.error().message);
      }
      trace = std::move(*result);
    }
    return PyTrace{std::make_shared<const Trace>(std::move(trace))};
  }, nb::arg("path"), nb::arg("partial") = false);
  m.def("report_names", &report_names);
  m.def("analyses", &analyses);
  m.def("run_groups", &run_groups, nb::arg("name"), nb::arg("groups"), nb::arg("labels"), nb::arg("options"),
        nb::arg("format") = "", nb::arg("time_unit") = "", nb::arg("filter_time") = "", nb::arg("filter_nvtx") = "");
  m.def("run_paths", &run_paths, nb::arg("name"), nb::arg("path_groups"), nb::arg("options"), nb::arg("format") = "",
        nb::arg("time_unit") = "");
  m.def("nvtx_push", &nvtx_push, nb::arg("name"), nb::arg("domain") = nb::none());
  m.def("nvtx_pop", &nvtx_pop, nb::arg("domain") = nb::none());
#ifdef KERNSCOPE_HAVE_NVTX
  m.attr("nvtx_available") = true;
#else
  m.attr("nvtx_available") = false;
#endif
}
