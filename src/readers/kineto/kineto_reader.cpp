#include "readers/kineto/kineto_reader.hpp"

#include "model/token_grids.hpp"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <unordered_map>

#include "base/progress.hpp"
#include "readers/kineto/decimal_time.hpp"
#include "readers/kineto/json_repair.hpp"
#include "readers/kineto/json_splitter.hpp"
#include "base/nsys_demangle.hpp"
#include "model/kernel_short_name.hpp"
#include "model/kineto_names.hpp"
#include "readers/kineto/kineto_event.hpp"

namespace kernscope::kineto {
namespace {

// "Memcpy HtoD (Pageable -> Device)" -> copy kind 1, source 0, destination 2 (nsys's numbering).
void memcpy_kinds(std::string_view name, std::int32_t& copy, std::int32_t& src, std::int32_t& dst) {
  copy = kineto_names::copy_kind_in(name);
  src = dst = kineto_names::kMemoryKindUnknown;
  const std::size_t open = name.find('(');
  const std::size_t arrow = name.find(" -> ", open == std::string_view::npos ? 0 : open);
  const std::size_t close = name.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos && close != std::string_view::npos && close > arrow) {
    src = kineto_names::memory_kind(name.substr(open + 1, arrow - open - 1));
    dst = kineto_names::memory_kind(name.substr(arrow + 4, close - arrow - 4));
  }
}

// Ranges whose args name an NVTX domain (kernscope's export of an nsys trace) get ids from here
// on, clear of the framework domains' ids (trace.hpp).
constexpr std::int64_t kKinetoNamedDomainBase = 0x4B4E0100;

// One NVTX row; Kineto's ranges carry no category, color or payload.
void push_nvtx_row(NvtxColumns& n, TimeNs start, TimeNs end, std::int64_t global_tid, std::int32_t event_type,
                   std::int64_t domain, StringId text) {
  n.start_ns.push_back(start);
  n.end_ns.push_back(end);
  n.global_tid.push_back(global_tid);
  n.end_global_tid.push_back(0);
  n.event_type.push_back(event_type);
  n.domain_id.push_back(domain);
  n.text.push_back(text);
  n.category.push_back(0);
  n.color.push_back(0);
  n.payload_kind.push_back(PayloadKind::kNone);
  n.payload_int.push_back(0);
  n.payload_double.push_back(0);
}

enum class Category {
  kKernel, kMemcpy, kMemset, kGraphExec, kRuntime, kDriver, kSync, kCpuOp, kPythonFunction, kUserAnnotation, kGpuUserAnnotation, kOther
};

Category category_of(std::string_view cat) {
  // Lower-case names since PyTorch 1.9; the capitalized ones are from older traces.
  if (cat == "kernel" || cat == "Kernel") return Category::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return Category::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return Category::kMemset;
  if (cat == "cuda_graph") return Category::kGraphExec;  // kernscope's export of whole-graph traces
  if (cat == "cuda_runtime" || cat == "Runtime") return Category::kRuntime;
  if (cat == "cuda_driver") return Category::kDriver;
  if (cat == "cuda_sync") return Category::kSync;
  if (cat == "cpu_op" || cat == "Operator") return Category::kCpuOp;
  if (cat == "python_function") return Category::kPythonFunction;  // with_stack=True: each Python call
  if (cat == "user_annotation") return Category::kUserAnnotation;
  if (cat == "gpu_user_annotation") return Category::kGpuUserAnnotation;
  return Category::kOther;
}

// The columns a copy and a set share, from a Kineto event (the launching process is found from the
// correlation at the end, as for kernels).
std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v < 0 ? 0 : v); }

template <class Columns>
void push_memory_op(Columns& m, const KinetoEvent& e, TimeNs begin, TimeNs end, std::int64_t device, std::int64_t stream) {
  m.start_ns.push_back(begin);
  m.end_ns.push_back(end);
  m.global_pid.push_back(0);
  m.bytes.push_back(std::max<std::int64_t>(e.bytes, 0));
  m.graph_node_id.push_back(std::max<std::int64_t>(e.graph_node_id, 0));
  m.device_id.push_back(u32(device));
  m.context_id.push_back(u32(e.context));
  m.green_context_id.push_back(0);
  m.stream_id.push_back(u32(stream));
  m.correlation_id.push_back(u32(e.correlation));
}

class Builder {
 public:
  Builder(Trace& trace, const OpenOptions& options) : t_(trace), options_(options) {}
  std::int64_t complete_events() const { return complete_events_; }

  Result<void> member(std::string_view key, const Span& value);
  Result<void> element(const Span& span);
  Result<void> finish(const SplitResult& split, const ByteSource& source);

 private:
  bool wanted(EventKind kind) const { return (options_.kinds & bit(kind)) != 0; }
  Result<void> add(const KinetoEvent& e, std::int64_t offset);
  std::int64_t compact_pid(const IdValue& id);
  std::int64_t global_tid(const KinetoEvent& e);
  StringId intern(std::string_view s) { return t_.strings.intern(s); }
  void count_ignored(std::string_view what) { ++ignored_[std::string(what)]; }

  Trace& t_;
  const OpenOptions& options_;
  EventParser parser_;
  RepairCounts repairs_;
  std::int64_t repaired_events_ = 0;
  std::optional<std::int64_t> base_ns_;
  std::string display_unit_;
  std::map<std::string, std::int64_t> ignored_;  // what was not mapped, by category
  // A kernel's names as nsys's columns hold them, derived once per distinct name in the JSON.
  struct KernelNames {
    StringId demangled, short_name, mangled;
  };
  KernelNames kernel_names(std::string_view name);
  std::unordered_map<StringId, KernelNames> kernel_names_;
  std::int64_t demangled_kernels_ = 0;  // kernels whose name came mangled
  std::int64_t flows_ = 0;
  std::int64_t bad_times_ = 0;
  std::int64_t complete_events_ = 0;  // "X" events of a category the model holds, with valid times

  // Ids: pids/tids that do not fit nsys's 24-bit fields, or are strings, get compact stand-ins.
  std::unordered_map<std::string, std::int64_t> text_ids_;
  std::unordered_map<std::int64_t, std::int64_t> wide_ids_;
  std::int64_t next_synthetic_ = 0xF00000;
  std::map<std::int64_t, std::string> process_names_;             // by compact pid
  std::map<std::int64_t, std::string> process_labels_;
  std::map<std::int64_t, std::string> thread_names_;              // by global tid
  std::map<std::int64_t, std::int64_t> host_event_count_;         // by compact pid: CPU-side events
  // NVTX domains named by ranges' args.domain (kernscope's export of an nsys trace): id by name.
  std::int64_t named_domain(std::string_view name);
  std::map<std::string, std::int64_t, std::less<>> named_domains_;
};

std::int64_t Builder::named_domain(std::string_view name) {
  if (name.empty()) return 0;  // the default domain, as PyTorch's own ranges
  auto it = named_domains_.find(name);
  if (it == named_domains_.end()) {
    const auto id = kKinetoNamedDomainBase + static_cast<std::int64_t>(named_domains_.size());
    it = named_domains_.emplace(std::string(name), id).first;
  }
  return it->second;
}

std::int64_t Builder::compact_pid(const IdValue& id) {
  if (!id.present) return 0;
  if (id.is_text) {
    auto [it, inserted] = text_ids_.emplace(std::string(id.text), next_synthetic_);
    if (inserted) ++next_synthetic_;
    return it->second;
  }
  if (id.number >= 0 && id.number < 0xF00000) return id.number;
  auto [it, inserted] = wide_ids_.emplace(id.number, next_synthetic_);
  if (inserted) ++next_synthetic_;
  return it->second;
}

std::int64_t Builder::global_tid(const KinetoEvent& e) {
  const std::int64_t pid = compact_pid(e.pid);
  const std::int64_t tid = compact_pid(e.tid);
  return (pid << 24) | tid;
}

// Kineto writes the name CUPTI or roctracer gave it: demangled on NVIDIA, but AMD traces (and
// some CUDA ones) keep Itanium manglings (_Z...). Those are shown as nsys shows names (its
// demangler's spelling) and the mangled form goes to the mangled-name column, as in an nsys export.
// A kernel name repeats thousands of times and can be kilobytes long: this runs once per name.
Builder::KernelNames Builder::kernel_names(std::string_view name) {
  const StringId raw = intern(name);
  auto it = kernel_names_.find(raw);
  if (it != kernel_names_.end()) return it->second;
  KernelNames names{raw, kNoString, kNoString};
  std::string demangled;
  if (name.starts_with("_Z")) demangled = nsys_demangle(name);
  if (!demangled.empty() && demangled != name) {
    names.demangled = intern(demangled);
    names.mangled = raw;
    names.short_name = intern(kernel_short_name(demangled));
  } else {
    names.short_name = intern(kernel_short_name(name));
  }
  return kernel_names_.emplace(raw, names).first->second;
}

// Top-level members are small: simdjson's DOM parser (validating, runtime-dispatched) reads them.
Result<void> Builder::member(std::string_view key, const Span& value) {
  namespace dom = simdjson::dom;
  dom::parser parser;
  dom::element doc;
  if (parser.parse(value.text.data(), value.text.size(), true).get(doc)) {
    t_.note("invalid_top_level_member", NoteSeverity::kError, "top-level member \"" + std::string(key) + "\" is not valid JSON; ignored");
    return {};
  }
  auto integer = [](dom::element e, std::int64_t fallback) {
    std::int64_t n = 0;
    if (e.get_int64().get(n) == simdjson::SUCCESS) return n;
    std::uint64_t u = 0;
    if (e.get_uint64().get(u) == simdjson::SUCCESS && u <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(u);
    double d = 0;
    if (e.get_double().get(d) == simdjson::SUCCESS && d > -9e18 && d < 9e18) return static_cast<std::int64_t>(d);
    return fallback;
  };
  if (key == "baseTimeNanoseconds") {
    std::int64_t base = integer(doc, INT64_MIN);
    if (base != INT64_MIN) base_ns_ = base;
    return {};
  }
  if (key == "displayTimeUnit") {
    std::string_view unit;
    if (doc.get_string().get(unit) == simdjson::SUCCESS) display_unit_ = unit;
    return {};
  }
  if (key == "deviceProperties") {
    dom::array devices;
    if (doc.get_array().get(devices)) return {};
    for (dom::element entry : devices) {
      dom::object o;
      if (entry.get_object().get(o)) continue;
      Device d;
      for (auto [k, v] : o) {
        if (k == "id") d.id = integer(v, 0);
        else if (k == "name") {
          std::string_view name;
          if (v.get_string().get(name) == simdjson::SUCCESS) d.name = name;
        } else if (k == "totalGlobalMem") d.total_memory_bytes = integer(v, 0);
        else if (k == "computeMajor") d.compute_major = static_cast<std::int32_t>(integer(v, 0));
        else if (k == "computeMinor") d.compute_minor = static_cast<std::int32_t>(integer(v, 0));
        else if (k == "numSms") d.sm_count = integer(v, 0);
      }
      d.cuda_id = d.id;
      t_.devices.push_back(std::move(d));
    }
    return {};
  }
  if (key == "distributedInfo") {
    dom::object o;
    if (doc.get_object().get(o)) return {};
    DistributedInfo info;
    for (auto [k, v] : o) {
      if (k == "backend") {
        std::string_view backend;
        if (v.get_string().get(backend) == simdjson::SUCCESS) info.backend = backend;
      } else if (k == "rank") {
        info.rank = integer(v, 0);
      } else if (k == "world_size") {
        info.world_size = integer(v, 0);
      }
    }
    t_.source.distributed = info;
    return {};
  }
  // Other scalars are kept as metadata (trace_id, cuda_driver_version...); objects are not.
  if (doc.is_string()) {
    std::string_view text;
    if (doc.get_string().get(text) == simdjson::SUCCESS) t_.source.metadata.emplace_back(key, std::string(text.substr(0, 256)));
  } else if (doc.is_number() || doc.is_bool()) {
    std::string_view token = value.text;
    while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t')) token.remove_suffix(1);
    t_.source.metadata.emplace_back(key, std::string(token.substr(0, 64)));
  }
  return {};
}

Result<void> Builder::element(const Span& span) {
  KinetoEvent e;
  Result<void> parsed = span.suspicious ? make_error(ErrorCode::kBadInput, "needs repair")
                                        : parser_.parse(span.text, span.text.size() + kSpanPadding, e);
  std::string repaired;
  if (!parsed) {
    const std::int64_t repairs_before = repairs_.total();
    repaired = repair_json(span.text, repairs_);
    const std::size_t length = repaired.size();
    repaired.append(kSpanPadding, '\0');
    auto again = parser_.parse(std::string_view(repaired.data(), length), repaired.size(), e);
    if (!again) {
      return make_error(ErrorCode::kBadInput, "malformed trace event at byte " + std::to_string(span.offset) +
                                                  ": " + parsed.error().message + " (repair failed: " +
                                                  again.error().message + ")");
    }
    if (repairs_.total() > repairs_before) ++repaired_events_;
  }
  return add(e, span.offset);
}

Result<void> Builder::add(const KinetoEvent& e, std::int64_t offset) {
  (void)offset;
  if (e.ph == "M") {
    const std::int64_t pid = compact_pid(e.pid);
    if (e.name == "process_name") process_names_[pid] = e.arg_name;
    else if (e.name == "process_labels") process_labels_[pid] = e.arg_labels;
    else if (e.name == "thread_name") thread_names_[global_tid(e)] = e.arg_name;
    return {};
  }
  if (e.ph == "s" || e.ph == "f" || e.ph == "t") {
    ++flows_;  // links launch -> kernel; the correlation id in both events' args says the same
    return {};
  }
  if (e.ph != "X") {
    count_ignored(e.ph.empty() ? std::string("events without \"ph\"") : "\"" + std::string(e.ph) + "\" events");
    return {};
  }
  const Category category = category_of(e.cat);
  if (category == Category::kOther) {
    count_ignored(e.cat.empty() ? std::string("events without a category") : std::string(e.cat));
    return {};
  }
  auto start = e.ts.empty() ? std::nullopt : microseconds_text_to_ns(e.ts);
  auto duration = e.dur.empty() ? std::optional<std::int64_t>(0) : microseconds_text_to_ns(e.dur);
  if (!start || !duration || *duration < 0) {
    ++bad_times_;
    return {};
  }
  ++complete_events_;  // a complete event of a category the model holds, loaded or not
  const TimeNs begin = *start;
  const TimeNs end = begin + *duration;
  const std::int64_t device = e.device >= 0 ? e.device : (e.pid.is_text ? 0 : e.pid.number);
  const std::int64_t stream = e.stream >= 0 ? e.stream : (e.tid.is_text ? 0 : e.tid.number);

  switch (category) {
    case Category::kKernel: {
      if (!wanted(EventKind::kKernels)) return {};
      auto& k = t_.kernels;
      k.start_ns.push_back(begin);
      k.end_ns.push_back(end);
      k.global_pid.push_back(0);  // the launching process, found from the correlation at the end
      k.device_id.push_back(u32(device));
      k.context_id.push_back(u32(e.context));
      k.green_context_id.push_back(0);
      k.stream_id.push_back(u32(stream));
      k.correlation_id.push_back(u32(e.correlation));
      k.grid_x.push_back(e.grid[0]);
      k.grid_y.push_back(e.grid[1]);
      k.grid_z.push_back(e.grid[2]);
      k.block_x.push_back(e.block[0]);
      k.block_y.push_back(e.block[1]);
      k.block_z.push_back(e.block[2]);
      k.registers_per_thread.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(e.registers, 0)));
      // Kineto writes static + dynamic shared memory as one figure.
      k.static_smem_bytes.push_back(0);
      k.dynamic_smem_bytes.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(e.shared_memory, 0)));
      k.launch_type.push_back(0);
      k.graph_node_id.push_back(std::max<std::int64_t>(e.graph_node_id, 0));
      const KernelNames names = kernel_names(e.name);
      k.demangled_name.push_back(names.demangled);
      k.short_name.push_back(names.short_name);
      k.mangled_name.push_back(names.mangled);
      demangled_kernels_ += names.mangled != kNoString;
      k.graph_id.push_back(std::max<std::int64_t>(e.graph_id, 0));
      k.external_id.push_back(std::max<std::int64_t>(e.external_id, 0));
      return {};
    }
    case Category::kMemcpy: {
      if (!wanted(EventKind::kMemcpy)) return {};
      auto& m = t_.memcpys;
      std::int32_t copy = 0, src = 0, dst = 0;
      memcpy_kinds(e.name, copy, src, dst);
      push_memory_op(m, e, begin, end, device, stream);
      m.copy_kind.push_back(copy);
      m.src_kind.push_back(src);
      m.dst_kind.push_back(dst);
      m.src_device_id.push_back(-1);
      m.dst_device_id.push_back(-1);
      return {};
    }
    case Category::kMemset: {
      if (!wanted(EventKind::kMemset)) return {};
      auto& m = t_.memsets;
      const std::size_t open = e.name.find('(');
      const std::size_t close = e.name.rfind(')');
      const std::int32_t kind = open != std::string_view::npos && close != std::string_view::npos && close > open
                                    ? kineto_names::memory_kind(e.name.substr(open + 1, close - open - 1))
                                    : kineto_names::kMemoryKindUnknown;
      push_memory_op(m, e, begin, end, device, stream);
      m.value.push_back(0);  // Kineto does not record the value
      m.mem_kind.push_back(kind);
      return {};
    }
    case Category::kGraphExec: {
      if (!wanted(EventKind::kGraphExecs)) return {};
      auto& g = t_.graph_execs;
      g.start_ns.push_back(begin);
      g.end_ns.push_back(end);
      g.global_pid.push_back(0);
      g.graph_id.push_back(std::max<std::int64_t>(e.graph_id, 0));
      g.graph_exec_id.push_back(std::max<std::int64_t>(e.graph_exec_id >= 0 ? e.graph_exec_id : e.graph_id, 0));
      g.device_id.push_back(u32(device));
      g.context_id.push_back(u32(e.context));
      g.stream_id.push_back(u32(stream));
      g.correlation_id.push_back(u32(e.correlation));
      return {};
    }
    case Category::kRuntime:
    case Category::kDriver: {
      ++host_event_count_[compact_pid(e.pid)];
      if (!wanted(EventKind::kApiCalls)) return {};
      auto& a = t_.api_calls;
      a.start_ns.push_back(begin);
      a.end_ns.push_back(end);
      a.global_tid.push_back(global_tid(e));
      a.correlation_id.push_back(u32(e.correlation));
      a.name.push_back(intern(e.name));
      a.return_value.push_back(0);
      a.event_class.push_back(category == Category::kRuntime ? 0 : 1);
      return {};
    }
    case Category::kSync: {
      if (!wanted(EventKind::kSyncs)) return {};
      auto& y = t_.syncs;
      y.start_ns.push_back(begin);
      y.end_ns.push_back(end);
      y.global_pid.push_back(0);
      y.event_id.push_back(std::max<std::int64_t>(e.wait_event_id, 0));
      y.device_id.push_back(u32(device));
      y.context_id.push_back(u32(e.context));
      y.stream_id.push_back(u32(stream));
      y.correlation_id.push_back(u32(e.correlation));
      y.sync_type.push_back(kineto_names::sync_type(e.name));
      return {};
    }
    case Category::kCpuOp:
    case Category::kPythonFunction:
    case Category::kUserAnnotation:
    case Category::kGpuUserAnnotation: {
      const bool on_gpu = category == Category::kGpuUserAnnotation;
      if (!on_gpu) ++host_event_count_[compact_pid(e.pid)];
      if (!wanted(EventKind::kNvtx)) return {};
      push_nvtx_row(t_.nvtx, begin, end, on_gpu ? (kDeviceTrackBit | (device << 24) | (stream & 0xFFFFFF)) : global_tid(e),
                    on_gpu ? kNvtxStartEndRange : kNvtxPushPopRange,
                    category == Category::kCpuOp            ? kKinetoCpuOpDomain
                    : category == Category::kPythonFunction ? kKinetoPythonDomain
                    : on_gpu                                ? kKinetoGpuAnnotationDomain
                                                            : named_domain(e.domain),
                    intern(e.name));
      if (category == Category::kCpuOp && !e.input_dims.empty()) {
        auto& o = t_.op_shapes;
        o.start_ns.push_back(begin);
        o.end_ns.push_back(end);
        o.global_tid.push_back(global_tid(e));
        o.external_id.push_back(std::max<std::int64_t>(e.external_id, 0));
        o.name.push_back(intern(e.name));
        o.input_dims.push_back(intern(e.input_dims));
        o.input_types.push_back(e.input_types.empty() ? kNoString : intern(e.input_types));
        o.concrete_inputs.push_back(e.concrete_inputs.empty() ? kNoString : intern(e.concrete_inputs));
      }
      return {};
    }
    case Category::kOther:
      break;
  }
  return {};
}

// Adds `delta` to every time column: relative timestamps become absolute once the base is known
// (Kineto may write baseTimeNanoseconds after the events).
void shift_times(Trace& t, TimeNs delta) {
  if (delta == 0) return;
  auto shift = [&](std::vector<TimeNs>& column) {
    for (auto& v : column) {
      if (v != kNoTime) v += delta;
    }
  };
  for (auto* c : {&t.kernels.start_ns, &t.kernels.end_ns, &t.memcpys.start_ns, &t.memcpys.end_ns,
                  &t.memsets.start_ns, &t.memsets.end_ns, &t.api_calls.start_ns, &t.api_calls.end_ns,
                  &t.syncs.start_ns, &t.syncs.end_ns, &t.nvtx.start_ns, &t.nvtx.end_ns, &t.op_shapes.start_ns,
                  &t.op_shapes.end_ns}) {
    shift(*c);
  }
}

Result<void> Builder::finish(const SplitResult& split, const ByteSource& source) {
  Trace& t = t_;
  if (!split.has_trace_events) {
    return make_error(ErrorCode::kBadInput, "a JSON document without \"traceEvents\": not a PyTorch profiler or Chrome trace");
  }
  if (base_ns_) shift_times(t, *base_ns_);

  // The host process: the one with the most CPU-side events. GPU work is attributed to the
  // process that launched it (by correlation id), else to that one.
  std::int64_t main_pid = 0;
  std::int64_t most = -1;
  for (const auto& [pid, count] : host_event_count_) {
    if (count > most) {
      most = count;
      main_pid = pid;
    }
  }
  std::unordered_map<std::uint32_t, std::int64_t> process_of_correlation;
  process_of_correlation.reserve(t.api_calls.size());
  for (RowIndex i = 0; i < t.api_calls.size(); ++i) {
    process_of_correlation.emplace(t.api_calls.correlation_id[i], process_key(t.api_calls.global_tid[i]));
  }
  const std::int64_t main_key = main_pid << 24;
  auto attribute = [&](DictColumn<std::int64_t>& global_pid, const std::vector<std::uint32_t>& correlation) {
    for (std::size_t i = 0; i < global_pid.size(); ++i) {
      auto it = process_of_correlation.find(correlation[i]);
      global_pid.set(i, it == process_of_correlation.end() ? main_key : it->second);
    }
  };
  attribute(t.kernels.global_pid, t.kernels.correlation_id);
  attribute(t.memcpys.global_pid, t.memcpys.correlation_id);
  attribute(t.memsets.global_pid, t.memsets.correlation_id);
  attribute(t.syncs.global_pid, t.syncs.correlation_id);
  attribute(t.graph_execs.global_pid, t.graph_execs.correlation_id);

  // Domain names for the framework ranges, as NVTX domain-creation rows at the first event.
  if (!t.nvtx.start_ns.empty()) {
    const TimeNs first = *std::min_element(t.nvtx.start_ns.begin(), t.nvtx.start_ns.end());
    // Domain names resolve per process (nsys's join ignores bits above the pid), once each.
    std::set<std::int64_t> processes;
    for (RowIndex i = 0; i < t.nvtx.size(); ++i) processes.insert(t.nvtx.global_tid[i] & 0x0000FFFFFF000000LL);
    for (const std::int64_t process : processes) {
      for (auto [domain, name] : {std::pair{kKinetoCpuOpDomain, "cpu_op"},
                                  std::pair{kKinetoGpuAnnotationDomain, "gpu_user_annotation"},
                                  std::pair{kKinetoPythonDomain, "python_function"}}) {
        push_nvtx_row(t.nvtx, first, kNoTime, process, kNvtxDomainCreate, domain, t.strings.intern(name));
      }
      for (const auto& [name, domain] : named_domains_) {
        push_nvtx_row(t.nvtx, first, kNoTime, process, kNvtxDomainCreate, domain, t.strings.intern(name));
      }
    }
  }

  // Processes: those with CPU-side events; threads: named ones and those seen on CPU events.
  for (const auto& [pid, count] : host_event_count_) {
    (void)count;
    Process p;
    p.global_pid = pid << 24;
    p.pid = pid;
    auto it = process_names_.find(pid);
    p.name = it == process_names_.end() ? "" : it->second;
    t.processes.push_back(std::move(p));
  }
  for (const auto& [gtid, name] : thread_names_) t.threads.push_back(Thread{gtid, name, 0});

  t.memcpy_kind_labels = kineto_names::nsys_memcpy_kind_labels();
  t.memory_kind_labels = kineto_names::nsys_memory_kind_labels();
  t.present = bit(EventKind::kKernels) | bit(EventKind::kMemcpy) | bit(EventKind::kMemset) |
              bit(EventKind::kApiCalls) | bit(EventKind::kSyncs) | bit(EventKind::kNvtx);
  if (t.graph_execs.size() > 0) t.present |= bit(EventKind::kGraphExecs);
  t.loaded = t.present & options_.kinds;
  t.detailed = t.loaded;
  t.has_string_table = true;
  t.has_gpu_info = !t.devices.empty();
  t.has_thread_names = !thread_names_.empty();
  t.has_mangled_names = demangled_kernels_ > 0;
  t.has_green_context = false;

  // What the source lacks and what the reader did, said plainly.
  t.note("kineto_source", NoteSeverity::kInfo, "PyTorch profiler (Kineto) trace: no OS runtime calls, no profiler overhead records; kernel shared "
                  "memory is static + dynamic together; memset values are not recorded");
  t.note("kernel_name_forms", NoteSeverity::kInfo,
         demangled_kernels_ > 0
                      ? std::to_string(demangled_kernels_) +
                            " kernels came with mangled names (_Z...): shown demangled, the mangled form kept for "
                            "the :mangled reports"
                      : "no mangled kernel names: Kineto wrote them demangled");
  if (!base_ns_) t.note("absolute_microseconds", NoteSeverity::kInfo, "timestamps are absolute microseconds (no baseTimeNanoseconds: a trace from before 2024)");
  if (split.truncated) {
    const std::string cut = "the file is cut short (the profiled process was killed?): read up to the last complete event; " +
                            std::to_string(split.truncated_bytes) + " bytes of an incomplete event were dropped";
    if (!options_.partial) {
      return make_error(ErrorCode::kBadInput, "the file is cut short: it ends inside a trace event (" +
                                                  std::to_string(split.truncated_bytes) +
                                                  " bytes; a profiler killed while writing, or a broken copy); --partial reads what is there");
    }
    t.note("cut_short", NoteSeverity::kDataLoss, cut, static_cast<std::int64_t>(split.truncated_bytes));
    t.cut_short = cut;
  } else if (source.cut_short()) {
    t.note("compressed_stream_cut_short", NoteSeverity::kInfo, "the compressed stream is cut short after the end of the JSON document");
  }
  if (repaired_events_ > 0 || split.trailing_commas > 0) {
    std::string what = "repaired invalid JSON: " + std::to_string(repaired_events_) + " events (";
    what += std::to_string(repairs_.control_chars) + " raw control characters, " + std::to_string(repairs_.quotes) +
            " unescaped quotes, " + std::to_string(repairs_.escapes) + " invalid escapes, " +
            std::to_string(repairs_.invalid_utf8) + " invalid UTF-8 bytes, " +
            std::to_string(repairs_.trailing_commas + split.trailing_commas) + " trailing commas)";
    t.note("repaired_json", NoteSeverity::kDataLoss, what, static_cast<std::int64_t>(repaired_events_ + split.trailing_commas));
  }
  if (bad_times_ > 0) {
    t.note("events_without_time", NoteSeverity::kDataLoss,
           std::to_string(bad_times_) + " events skipped: missing or unreadable \"ts\" or a negative \"dur\"", static_cast<std::int64_t>(bad_times_));
  }
  if (!ignored_.empty()) {
    std::string what = "not mapped to the model (kept out of reports): ";
    bool first = true;
    std::int64_t events = 0;
    for (const auto& [category, count] : ignored_) {
      what += (first ? "" : ", ") + std::to_string(count) + " " + category;
      events += static_cast<std::int64_t>(count);
      first = false;
    }
    t.note("unmapped_events", NoteSeverity::kInfo, what, events);
  }
  if (flows_ > 0) {
    t.note("flow_events", NoteSeverity::kInfo,
           std::to_string(flows_) + " flow events read as links only (launch -> kernel is joined by correlation id)", static_cast<std::int64_t>(flows_));
  }
  t.source.metadata.emplace_back("events", std::to_string(split.elements));
  t.source.metadata.emplace_back("json_bytes", std::to_string(split.document_bytes));
  if (!display_unit_.empty()) t.source.metadata.emplace_back("displayTimeUnit", display_unit_);
  return {};
}

}  // namespace

namespace {

// The source as the reader sees it, counting the bytes it hands out for the progress line.
class MeteredSource : public ByteSource {
 public:
  MeteredSource(ByteSource& inner, progress::Meter& meter) : inner_(inner), meter_(meter) {}
  Result<std::size_t> read(char* out, std::size_t capacity) override {
    auto n = inner_.read(out, capacity);
    if (n) meter_.add(*n);
    return n;
  }
  std::size_t stored_bytes() const override { return inner_.stored_bytes(); }
  bool cut_short() const override { return inner_.cut_short(); }

 private:
  ByteSource& inner_;
  progress::Meter& meter_;
};

}  // namespace

Result<Trace> read_kineto(ByteSource& raw_source, const std::string& label, const OpenOptions& options) {
  progress::Meter meter("reading " + label, "bytes");
  MeteredSource source(raw_source, meter);
  Trace trace;
  trace.source.format = "kineto-json";
  trace.source.path = label;
  Builder builder(trace, options);
  JsonSplitter splitter;
  auto split = splitter.run(
      source, [&](std::string_view key, const Span& value) { return builder.member(key, value); },
      [&](const Span& element) { return builder.element(element); });
  if (!split) return make_error(split.error().code, label + ": " + split.error().message);
  auto finished = builder.finish(*split, source);
  if (!finished) return make_error(finished.error().code, label + ": " + finished.error().message);
  token_grids_from_grids(trace.kernels, trace.strings);  // Kineto writes every kernel's grid
  // A trace with no complete event of any category kernscope reads is an error, as an empty nsys
  // export is.
  if (builder.complete_events() == 0) {
    return make_error(ErrorCode::kBadInput, label + ": the JSON holds no complete trace event kernscope reads (no kernel, "
                                                    "copy, runtime call or annotation with a start and a duration)");
  }
  return trace;
}

}  // namespace kernscope::kineto
