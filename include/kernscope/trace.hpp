// The one trace model every reader fills and every analysis reads: one struct of columns (vectors,
// or DictColumns where values are few)
// per event kind, strings interned, time in int64 nanoseconds. Thread and process ids keep Nsight
// Systems' packing (globalTid = pid << 24 | tid, globalPid = pid << 24, with hardware/VM bits above
// bit 40) so nsys-compatible reports can reproduce nsys's joins exactly; helpers below unpack them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernscope/dict_column.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/string_pool.hpp"
#include "kernscope/time_units.hpp"

namespace kernscope {

using RowIndex = std::uint32_t;

inline std::int64_t pid_of(std::int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline std::int64_t tid_of(std::int64_t global_tid) { return global_tid & 0xFFFFFF; }
// globalTid with the thread bits cleared: equals the globalPid of the owning process.
inline std::int64_t process_key(std::int64_t global_tid) {
  return global_tid & static_cast<std::int64_t>(0xFFFFFFFFFF000000ULL);
}

// Each column struct lists its columns once in visit(), so generic code (row selection, reserve,
// memory accounting) works on every event kind without repeating member lists.
struct KernelColumns {
  std::vector<TimeNs> start_ns, end_ns;
  DictColumn<std::int64_t> global_pid;
  DictColumn<std::uint32_t> device_id, context_id, stream_id;
  std::vector<std::uint32_t> green_context_id, correlation_id;
  std::vector<std::int32_t> grid_x, grid_y, grid_z, block_x, block_y, block_z;
  std::vector<std::int32_t> registers_per_thread, static_smem_bytes, dynamic_smem_bytes;
  std::vector<std::int32_t> launch_type;
  DictColumn<std::int64_t> graph_node_id;  // 0 when not launched from a graph node
  std::vector<StringId> demangled_name, short_name, mangled_name;
  // Detail columns some sources lack (0 there): the CUDA graph, the launching framework op.
  std::vector<std::int64_t> graph_id, external_id;
  // The grid's x of kernels that launch one block per new token (model/token_grids.hpp), 0 for
  // the others; empty where the trace has none. Read whatever the load plan (which may leave the
  // grid unread), so a step's tokens do not depend on the command.
  std::vector<std::int32_t> token_grid;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_pid); f(s.device_id); f(s.context_id);
    f(s.green_context_id); f(s.stream_id); f(s.correlation_id); f(s.grid_x); f(s.grid_y);
    f(s.grid_z); f(s.block_x); f(s.block_y); f(s.block_z); f(s.registers_per_thread);
    f(s.static_smem_bytes); f(s.dynamic_smem_bytes); f(s.launch_type); f(s.graph_node_id);
    f(s.demangled_name); f(s.short_name); f(s.mangled_name); f(s.graph_id); f(s.external_id); f(s.token_grid);
  }
  std::size_t size() const { return start_ns.size(); }
  // The name a kernel is shown by: demangled, else its short name (where short names were read).
  StringId shown_name(RowIndex i) const {
    return demangled_name[i] != kNoString || i >= short_name.size() ? demangled_name[i] : short_name[i];
  }
};

struct MemcpyColumns {
  std::vector<TimeNs> start_ns, end_ns;
  DictColumn<std::int64_t> global_pid;
  std::vector<std::int64_t> bytes, graph_node_id;
  DictColumn<std::uint32_t> device_id, context_id, stream_id;
  std::vector<std::uint32_t> green_context_id, correlation_id;
  std::vector<std::int32_t> copy_kind, src_kind, dst_kind;
  std::vector<std::int64_t> src_device_id, dst_device_id;  // -1 when not recorded (host memory)

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_pid); f(s.bytes); f(s.graph_node_id); f(s.device_id);
    f(s.context_id); f(s.green_context_id); f(s.stream_id); f(s.correlation_id); f(s.copy_kind);
    f(s.src_kind); f(s.dst_kind); f(s.src_device_id); f(s.dst_device_id);
  }
  std::size_t size() const { return start_ns.size(); }
};

struct MemsetColumns {
  std::vector<TimeNs> start_ns, end_ns;
  DictColumn<std::int64_t> global_pid;
  std::vector<std::int64_t> bytes, graph_node_id;
  DictColumn<std::uint32_t> device_id, context_id, stream_id;
  std::vector<std::uint32_t> green_context_id, correlation_id;
  std::vector<std::int32_t> value, mem_kind;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_pid); f(s.bytes); f(s.graph_node_id); f(s.device_id);
    f(s.context_id); f(s.green_context_id); f(s.stream_id); f(s.correlation_id); f(s.value);
    f(s.mem_kind);
  }
  std::size_t size() const { return start_ns.size(); }
};

// Executions of whole CUDA graphs, where graphs were traced as units (nsys --cuda-graph-trace=graph,
// kernscope record --cuda-graph-trace graph): GPU time whose kernels are not itemized.
struct GraphExecColumns {
  std::vector<TimeNs> start_ns, end_ns;
  DictColumn<std::int64_t> global_pid;
  std::vector<std::int64_t> graph_id, graph_exec_id;
  std::vector<std::uint32_t> device_id, context_id, stream_id, correlation_id;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_pid); f(s.graph_id); f(s.graph_exec_id); f(s.device_id);
    f(s.context_id); f(s.stream_id); f(s.correlation_id);
  }
  std::size_t size() const { return start_ns.size(); }
};

// CUDA runtime and driver API calls (nsys keeps both in CUPTI_ACTIVITY_KIND_RUNTIME).
struct ApiCallColumns {
  std::vector<TimeNs> start_ns, end_ns;
  DictColumn<std::int64_t> global_tid;
  std::vector<std::uint32_t> correlation_id;
  DictColumn<StringId> name;
  std::vector<std::int32_t> return_value, event_class;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_tid); f(s.correlation_id); f(s.name);
    f(s.return_value); f(s.event_class);
  }
  std::size_t size() const { return start_ns.size(); }
};

struct SyncColumns {
  std::vector<TimeNs> start_ns, end_ns;
  DictColumn<std::int64_t> global_pid;
  std::vector<std::int64_t> event_id;
  std::vector<std::uint32_t> device_id, context_id, stream_id, correlation_id;
  std::vector<std::int32_t> sync_type;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_pid); f(s.event_id); f(s.device_id); f(s.context_id);
    f(s.stream_id); f(s.correlation_id); f(s.sync_type);
  }
  std::size_t size() const { return start_ns.size(); }
};

// NVTX event types as Nsight Systems numbers them.
enum NvtxEventType : std::int32_t {
  kNvtxMark = 34,
  kNvtxPushPopRange = 59,
  kNvtxStartEndRange = 60,
  kNvtxtPushPopRange = 70,
  kNvtxtStartEndRange = 71,
  kNvtxDomainCreate = 75,
  kNvtxRegisterString = 76,
};
inline bool is_nvtx_range(std::int32_t type) {
  return type == kNvtxPushPopRange || type == kNvtxStartEndRange || type == kNvtxtPushPopRange ||
         type == kNvtxtStartEndRange;
}
inline bool is_nvtx_pushpop(std::int32_t type) {
  return type == kNvtxPushPopRange || type == kNvtxtPushPopRange;
}

// PyTorch-profiler (Kineto) traces carry four kinds of ranges; all live in the NVTX columns,
// kept apart by domain: record_function / user annotations in the default domain (as NVTX ranges
// from torch.cuda.nvtx would be), and these three domains, named by domain-creation rows.
inline constexpr std::int64_t kKinetoCpuOpDomain = 0x4B4E0001;          // "cpu_op": aten operators
inline constexpr std::int64_t kKinetoGpuAnnotationDomain = 0x4B4E0002;  // "gpu_user_annotation"
inline constexpr std::int64_t kKinetoPythonDomain = 0x4B4E0003;         // "python_function" (with_stack=True)
inline bool is_kineto_op_domain(std::int64_t domain) {
  return domain == kKinetoCpuOpDomain || domain == kKinetoGpuAnnotationDomain || domain == kKinetoPythonDomain;
}
// Tracks that belong to a GPU rather than to a CPU thread (Kineto's GPU-side annotations) use
// this bit above nsys's process bits: pid_of() gives the device, tid_of() the stream.
inline constexpr std::int64_t kDeviceTrackBit = std::int64_t{1} << 48;

enum class PayloadKind : std::uint8_t { kNone, kUint64, kInt64, kDouble, kUint32, kInt32, kFloat };

// All NVTX_EVENTS rows: ranges, marks and domain creations (kept as rows, because nsys's reports
// resolve domain names through them under the same time filter as the ranges).
struct NvtxColumns {
  std::vector<TimeNs> start_ns, end_ns;          // end_ns == kNoTime: never closed, or a mark
  std::vector<std::int64_t> global_tid, end_global_tid;  // end_global_tid 0: ended on the same thread
  std::vector<std::int32_t> event_type;
  std::vector<std::int64_t> domain_id;
  std::vector<StringId> text;                   // inline text or registered string, resolved
  std::vector<std::int32_t> category;
  std::vector<std::uint32_t> color;              // ARGB; 0 when none
  std::vector<PayloadKind> payload_kind;
  std::vector<std::int64_t> payload_int;
  std::vector<double> payload_double;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_tid); f(s.end_global_tid); f(s.event_type);
    f(s.domain_id); f(s.text); f(s.category); f(s.color); f(s.payload_kind); f(s.payload_int);
    f(s.payload_double);
  }
  std::size_t size() const { return start_ns.size(); }
};

// Framework operators' argument shapes as PyTorch's profiler records them with record_shapes=True
// (a cpu_op event's "Input Dims", "Input type" and "Concrete Inputs": the values of scalar arguments,
// such as is_causal or a convolution's stride), one row per operator event that has them; the
// operator itself is also an NVTX row (domain cpu_op). The arrays are kept as the JSON text the
// trace wrote ("[[8, 4096], [4096, 14336]]", "[\"c10::BFloat16\", \"float\"]"); the roofline
// parses them. Not touched by time/NVTX filters: it is looked up from the kernels, which are.
struct OpShapeColumns {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<std::int64_t> global_tid, external_id;  // external_id 0: none recorded
  std::vector<StringId> name, input_dims, input_types, concrete_inputs;  // kNoString: absent

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_tid); f(s.external_id); f(s.name); f(s.input_dims);
    f(s.input_types); f(s.concrete_inputs);
  }
  std::size_t size() const { return start_ns.size(); }
};

// OS runtime calls (OSRT_API): poll, ioctl, pthread_mutex_lock...
struct OsrtColumns {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<std::int64_t> global_tid;
  std::vector<StringId> name;
  std::vector<std::int32_t> event_class;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_tid); f(s.name); f(s.event_class);
  }
  std::size_t size() const { return start_ns.size(); }
};

// Time the profiler itself spent (PROFILER_OVERHEAD): nsys's GPU-gap and utilisation rules count
// some of it ("CUDA profiling overhead") as GPU busy time.
struct OverheadColumns {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<std::int64_t> global_tid;
  std::vector<StringId> name;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.start_ns); f(s.end_ns); f(s.global_tid); f(s.name);
  }
  std::size_t size() const { return start_ns.size(); }
};

// GPU state sampled on a timer (NVML by kernscope's tracer): one row per device per sample.
struct GpuSampleColumns {
  std::vector<TimeNs> time_ns;
  std::vector<std::uint32_t> device_id;
  std::vector<std::int32_t> sm_clock_mhz, memory_clock_mhz, temperature_c;
  std::vector<std::int32_t> gpu_util_percent, memory_util_percent;
  std::vector<std::int64_t> power_mw, memory_used_bytes;
  std::vector<std::int64_t> pcie_tx_kbps, pcie_rx_kbps;  // -1 when not sampled
  std::vector<std::uint64_t> clock_event_reasons;        // NVML's clocks-event (throttle) bit set

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.time_ns); f(s.device_id); f(s.sm_clock_mhz); f(s.memory_clock_mhz); f(s.temperature_c);
    f(s.gpu_util_percent); f(s.memory_util_percent); f(s.power_mw); f(s.memory_used_bytes);
    f(s.pcie_tx_kbps); f(s.pcie_rx_kbps); f(s.clock_event_reasons);
  }
  std::size_t size() const { return time_ns.size(); }
};

// Stretches of a CUDA-calling thread's time in which it was busy on a CPU (used half of the wall
// time or more) or not, from kernscope's tracer (KERNSCOPE_THREAD_CPU, thread_cpu_sampler.hpp) or
// nsys's scheduling events (SCHED_EVENTS, readers/nsys_sqlite/scheduling_events.hpp):
// host work that no call or range records shows as busy stretches.
struct ThreadCpuColumns {
  std::vector<std::int64_t> global_tid;
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<std::int64_t> cpu_ns;
  std::vector<std::uint8_t> busy;

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.global_tid); f(s.start_ns); f(s.end_ns); f(s.cpu_ns); f(s.busy);
  }
  std::size_t size() const { return start_ns.size(); }
};

struct Device {
  std::int64_t id = 0;
  std::string name;
  std::string chip_name;
  std::string bus_location;
  std::string uuid;
  std::int64_t sm_count = 0;
  std::int64_t total_memory_bytes = 0;
  std::int64_t memory_bandwidth_bytes_per_s = 0;
  std::int64_t clock_rate_hz = 0;
  std::int64_t l2_cache_bytes = 0;
  std::int32_t compute_major = 0;
  std::int32_t compute_minor = 0;
  std::optional<std::int64_t> cuda_id;  // from TARGET_INFO_CUDA_DEVICE where present
};

struct Process {
  std::int64_t global_pid = 0;
  std::int64_t pid = 0;
  std::string name;
};

struct Thread {
  std::int64_t global_tid = 0;
  std::string name;
  std::int32_t priority = 0;
};

// Event kinds, as a bit set, so callers load only what they need.
enum class EventKind : std::uint32_t {
  kKernels = 1u << 0,
  kMemcpy = 1u << 1,
  kMemset = 1u << 2,
  kApiCalls = 1u << 3,
  kSyncs = 1u << 4,
  kNvtx = 1u << 5,
  kOsrt = 1u << 6,
  kOverhead = 1u << 7,
  kGpuSamples = 1u << 8,
  kGraphExecs = 1u << 9,
};
using EventKinds = std::uint32_t;
inline constexpr EventKinds kAllEventKinds = 0x3FF;
inline constexpr EventKinds bit(EventKind kind) { return static_cast<EventKinds>(kind); }

struct DistributedInfo {
  std::string backend;
  std::int64_t rank = 0;
  std::int64_t world_size = 0;
};

struct SourceInfo {
  std::string format;          // "nsys-sqlite", "kineto-json"
  std::string path;
  std::string product_version;  // e.g. 2025.3.2.0
  std::string schema_version;   // e.g. 3.20.3
  std::int64_t session_start_utc_ns = 0;
  std::optional<DistributedInfo> distributed;
  // Scalar metadata the source carries (Kineto: cuda_driver_version, trace_id...), in file order.
  std::vector<std::pair<std::string, std::string>> metadata;
  // kernscope's tracer: its KERNSCOPE_TRACER_INFO rows (recorded kinds, CUPTI version, ...), in file order.
  std::vector<std::pair<std::string, std::string>> tracer_info;

  // The tracer_info value named `name`, empty when absent.
  std::string tracer_info_value(std::string_view name) const {
    for (const auto& [k, v] : tracer_info) {
      if (k == name) return v;
    }
    return {};
  }
};

// kernscope's tracer timing its own code on one thread (KERNSCOPE_TRACER_COST): what it ran there
// (a CUPTI callback, its set-up, its finish), how often and for how long.
struct TracerThreadCost {
  std::int64_t global_tid = 0;
  std::string site;            // "buffer_request", "buffer_complete", "nvtx_callback", "init", ...
  std::int64_t calls = 0;
  std::int64_t total_ns = 0;
  bool program_thread = false;  // a thread of the program (it made CUDA calls), not the tracer's or CUPTI's
};

// A window a live capture or a capture range recorded (kernscope's tracer): work outside the
// windows was not recorded, and a step cut by a window's edge holds only part of its work.
struct CaptureWindow {
  TimeNs start = 0;
  std::optional<TimeNs> end;  // unset: the program ended or was killed while it was open
  std::string opened_by, closed_by;
};

// The host side of a trace beside its CUDA records: stacks sampled on a timer, from Nsight Systems
// (--sample=cpu, Python backtraces with --python-sampling) or from `kernscope record --sample cpu`
// (Python frames from inside the process), both stored in nsys's COMPOSITE_EVENTS and
// SAMPLING_CALLCHAINS tables; and what the recorder said about itself (KERNSCOPE_HOST_INFO).
// Loaded with the NVTX event kind when its detail is asked (OpenOptions::detail_kinds; garbage
// collections are NVTX ranges, see host_profile.hpp).
// Distinct call stacks, each a run of frames innermost first: stack i is frames
// [first_frame[i], first_frame[i + 1]) (first_frame has one entry more than there are stacks).
struct HostStacks {
  std::vector<std::uint32_t> first_frame;
  std::vector<StringId> symbol;  // function (Python: qualified name; native: symbol, or the address)
  std::vector<StringId> module;  // Python file or shared object
  std::vector<std::uint8_t> unresolved;  // 1: the symbol could not be resolved (stripped binary)

  std::size_t size() const { return first_frame.empty() ? 0 : first_frame.size() - 1; }
  std::uint32_t frames_of(std::size_t stack) const { return first_frame[stack + 1] - first_frame[stack]; }
};

// One row per thread-sample, in time order.
struct HostSampleColumns {
  std::vector<TimeNs> time_ns;
  std::vector<std::int64_t> global_tid;
  std::vector<std::uint32_t> stack;  // index into HostStacks

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.time_ns); f(s.global_tid); f(s.stack);
  }
  std::size_t size() const { return time_ns.size(); }
};

struct HostData {
  HostSampleColumns samples;
  HostStacks stacks;
  // KERNSCOPE_HOST_INFO rows, in file order (sampler_hz_asked, sampler_busy_share, gil_wait, ...).
  std::vector<std::pair<std::string, std::string>> info;
  // Wall-clock samples (kernscope's sampler: every thread at each tick, running or not), where a
  // sample stands for the time since its thread's previous one; otherwise CPU samples (nsys
  // --sample=cpu: a thread is sampled while it runs), each standing for one sampling period.
  bool wall_clock = false;
};


struct Trace {
  SourceInfo source;
  StringPool strings;

  KernelColumns kernels;
  MemcpyColumns memcpys;
  MemsetColumns memsets;
  GraphExecColumns graph_execs;
  ApiCallColumns api_calls;
  SyncColumns syncs;
  NvtxColumns nvtx;
  OsrtColumns osrt;
  OverheadColumns overhead;
  GpuSampleColumns gpu_samples;
  ThreadCpuColumns thread_cpu;  // kernscope tracer traces, and nsys exports with scheduling events
  HostData host;  // sampled host stacks (loaded with the NVTX kind)
  OpShapeColumns op_shapes;  // Kineto record_shapes only (loaded with the NVTX kind)

  std::vector<Device> devices;
  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<TracerThreadCost> tracer_cost;  // kernscope tracer traces only
  // The recording windows (kernscope tracer traces of a live capture or capture range); empty: the
  // trace covers its whole span.
  std::vector<CaptureWindow> capture_windows;

  // Labels of nsys enumerations (copy kind, memory kind), read from the file where it has them.
  std::map<std::int32_t, std::string> memcpy_kind_labels;
  std::map<std::int32_t, std::string> memory_kind_labels;
  // Whether a memory kind is pageable host memory: by the file's label where it has one, else by
  // nsys's numbering (0 is pageable).
  bool pageable_memory(std::int32_t kind) const {
    if (has_memory_kind_labels) {
      const auto it = memory_kind_labels.find(kind);
      if (it != memory_kind_labels.end()) return it->second.find("ageable") != std::string::npos;
    }
    return kind == 0;
  }
  // Whether memcpy row `r` copies to or from pageable host memory.
  bool pageable_memcpy(RowIndex r) const {
    return (r < memcpys.src_kind.size() && pageable_memory(memcpys.src_kind[r])) ||
           (r < memcpys.dst_kind.size() && pageable_memory(memcpys.dst_kind[r]));
  }

  EventKinds present = 0;   // kinds whose source table exists (it may be empty)
  EventKinds loaded = 0;    // kinds read into the columns above
  // Loaded kinds with every column filled. For the others (OpenOptions::detail_kinds) only the
  // columns summaries use are filled and the rest are empty vectors.
  EventKinds detailed = 0;
  bool has_string_table = true;
  bool has_gpu_info = true;
  bool has_thread_names = true;
  bool has_memcpy_kind_labels = true;
  bool has_memory_kind_labels = true;
  bool has_green_context = true;  // greenContextId column
  bool has_mangled_names = true;  // mangledName column
  bool has_graph_node_ids = true;

  // What the source lacks and what the reader met that did not stop it (shown by `kernscope info`
  // and beside reports), each with a kind and a severity (notes.hpp).
  std::vector<Note> notes;
  void note(std::string kind, NoteSeverity severity, std::string text, std::int64_t count = 1) {
    notes.push_back({std::move(kind), severity, std::move(text), count});
  }
  // Whether a note of this kind was made.
  bool has_note(std::string_view kind) const {
    for (const auto& n : notes) {
      if (n.kind == kind) return true;
    }
    return false;
  }
  // Set when the file was cut short and read anyway (OpenOptions::partial): what was dropped.
  std::optional<std::string> cut_short;

  // The window [start, end) a time or NVTX filter kept (apply_filter, trace_filter.hpp): work
  // that straddles its edges is only partly in the trace. Unset when unfiltered.
  std::optional<std::pair<TimeNs, TimeNs>> filter_window;

  bool has(EventKind kind) const { return (present & bit(kind)) != 0; }
};

}  // namespace kernscope
