// Each event kind's columns named once: the model's member, its name in Python's frames, and its
// column in Nsight Systems' SQLite export with the SQL literal read where that column is absent or
// NULL. Python's column dictionaries (python/src/kernscope_ext.cpp) and the nsys reader's SELECT
// and row reading (every kind but NVTX, whose rows need resolving) follow these lists; a list's
// order is the order of its kind's columns in Python's frames.
// tests/unit/column_defs_test.cpp checks that every list names each member of its struct (as
// visit() lists them) exactly once.
#pragma once

#include <tuple>
#include <type_traits>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

// When the nsys reader fills a column: always, or only where the load plan asks for the kind's
// details (launch geometry, return values: Trace::detailed) or for kernels' short and mangled
// names (OpenOptions::kernel_name_variants). A column left out stays empty.
enum class ColumnPart { kAlways, kDetail, kNameVariant };

// Column: the member's type, a std::vector or a DictColumn (kernscope/dict_column.hpp).
template <class Columns, class Column>
struct ColumnDef {
  Column Columns::*member;
  const char* python;    // the column's name in Python's frames; nullptr: not handed to Python
  const char* nsys;      // its nsys SQLite column; nullptr: the table has none (filled with 0 when read)
  const char* fallback;  // SQL literal where the nsys column is absent or NULL; nullptr keeps NULL
  bool interned = false;  // the nsys column holds a StringIds id (the model keeps a StringId)
  ColumnPart part = ColumnPart::kAlways;
  bool from_nsys = true;  // false: the nsys reader reads this kind itself (NVTX) or never fills it
};

template <class Columns, class Column>
constexpr ColumnDef<Columns, Column> column(Column Columns::*member, const char* python, const char* nsys = nullptr,
                                            const char* fallback = "0") {
  return {member, python, nsys, fallback, false};
}
// A column of interned strings (names, texts): NULL stays NULL (kNoString).
template <class Columns, class Column>
constexpr ColumnDef<Columns, Column> string_column(Column Columns::*member, const char* python,
                                                     const char* nsys = nullptr) {
  static_assert(std::is_same_v<typename Column::value_type, StringId>, "an interned column holds StringIds");
  return {member, python, nsys, nullptr, true};
}

// The same definition, filled only when the plan asks for the kind's details / name variants.
template <class Columns, class Column>
constexpr ColumnDef<Columns, Column> detail(ColumnDef<Columns, Column> def) {
  def.part = ColumnPart::kDetail;
  return def;
}
template <class Columns, class Column>
constexpr ColumnDef<Columns, Column> name_variant(ColumnDef<Columns, Column> def) {
  def.part = ColumnPart::kNameVariant;
  return def;
}
// A column the nsys reader does not fill from these lists.
template <class Columns, class Column>
constexpr ColumnDef<Columns, Column> not_from_nsys(ColumnDef<Columns, Column> def) {
  def.from_nsys = false;
  return def;
}

template <class Columns>
struct ColumnDefs;  // `static constexpr std::tuple all`: the kind's columns

template <>
struct ColumnDefs<KernelColumns> {
  using C = KernelColumns;
  // The context is always read: nsys analyze's gpu_time_util/gpu_gaps show the context of a
  // device's last operation, which may be a kernel, and analyze/report load kernels without
  // their details. So is the stream: report's what-if replay orders kernels by stream. The KERNEL table has no graph id and no framework op id (0 when read).
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, "start_ns", "start"), column(&C::end_ns, "end_ns", "end"),
      column(&C::global_pid, "global_pid", "globalPid"), column(&C::device_id, "device", "deviceId"),
      column(&C::context_id, "context", "contextId"), column(&C::stream_id, "stream", "streamId"),
      column(&C::correlation_id, "correlation", "correlationId"), detail(column(&C::grid_x, "grid_x", "gridX")),
      detail(column(&C::grid_y, "grid_y", "gridY")), detail(column(&C::grid_z, "grid_z", "gridZ")),
      detail(column(&C::block_x, "block_x", "blockX")), detail(column(&C::block_y, "block_y", "blockY")),
      detail(column(&C::block_z, "block_z", "blockZ")),
      detail(column(&C::registers_per_thread, "registers_per_thread", "registersPerThread")),
      detail(column(&C::static_smem_bytes, "static_smem_bytes", "staticSharedMemory")),
      detail(column(&C::dynamic_smem_bytes, "dynamic_smem_bytes", "dynamicSharedMemory")),
      detail(column(&C::graph_id, "graph_id")), column(&C::graph_node_id, "graph_node_id", "graphNodeId"),
      detail(column(&C::external_id, "external_id")), string_column(&C::demangled_name, "name", "demangledName"),
      name_variant(string_column(&C::short_name, "short_name", "shortName")),
      detail(column(&C::green_context_id, nullptr, "greenContextId")), detail(column(&C::launch_type, nullptr, "launchType")),
      name_variant(string_column(&C::mangled_name, nullptr, "mangledName")),
      not_from_nsys(column(&C::token_grid, nullptr)));  // the readers fill it (model/token_grids.hpp)
};

template <>
struct ColumnDefs<MemcpyColumns> {
  using C = MemcpyColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, "start_ns", "start"), column(&C::end_ns, "end_ns", "end"),
      column(&C::global_pid, "global_pid", "globalPid"), column(&C::device_id, "device", "deviceId"),
      column(&C::stream_id, "stream", "streamId"), column(&C::correlation_id, "correlation", "correlationId"),
      column(&C::bytes, "bytes", "bytes"), column(&C::copy_kind, "copy_kind", "copyKind"),
      column(&C::src_kind, "src_kind", "srcKind", "-1"), column(&C::dst_kind, "dst_kind", "dstKind", "-1"),
      column(&C::graph_node_id, nullptr, "graphNodeId"), column(&C::context_id, nullptr, "contextId"),
      column(&C::green_context_id, nullptr, "greenContextId"),
      column(&C::src_device_id, nullptr, "srcDeviceId", "-1"), column(&C::dst_device_id, nullptr, "dstDeviceId", "-1"));
};

template <>
struct ColumnDefs<MemsetColumns> {
  using C = MemsetColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, "start_ns", "start"), column(&C::end_ns, "end_ns", "end"),
      column(&C::global_pid, "global_pid", "globalPid"), column(&C::device_id, "device", "deviceId"),
      column(&C::stream_id, "stream", "streamId"), column(&C::correlation_id, "correlation", "correlationId"),
      column(&C::bytes, "bytes", "bytes"), column(&C::mem_kind, "mem_kind", "memKind", "-1"),
      column(&C::graph_node_id, nullptr, "graphNodeId"), column(&C::context_id, nullptr, "contextId"),
      column(&C::green_context_id, nullptr, "greenContextId"), column(&C::value, nullptr, "value"));
};

template <>
struct ColumnDefs<GraphExecColumns> {
  using C = GraphExecColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, "start_ns", "start"), column(&C::end_ns, "end_ns", "end"),
      column(&C::global_pid, "global_pid", "globalPid"), column(&C::device_id, "device", "deviceId"),
      column(&C::stream_id, "stream", "streamId"), column(&C::correlation_id, "correlation", "correlationId"),
      column(&C::graph_id, "graph_id", "graphId"), column(&C::graph_exec_id, "graph_exec_id", "graphExecId"),
      column(&C::context_id, nullptr, "contextId"));
};

template <>
struct ColumnDefs<ApiCallColumns> {
  using C = ApiCallColumns;
  // Return values and event classes are details (cuda_api_trace asks for them).
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, "start_ns", "start"), column(&C::end_ns, "end_ns", "end"),
      column(&C::global_tid, "global_tid", "globalTid"), column(&C::correlation_id, "correlation", "correlationId"),
      detail(column(&C::return_value, "return_value", "returnValue")), string_column(&C::name, "name", "nameId"),
      detail(column(&C::event_class, nullptr, "eventClass")));
};

template <>
struct ColumnDefs<SyncColumns> {
  using C = SyncColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, nullptr, "start"), column(&C::end_ns, nullptr, "end"),
      column(&C::global_pid, nullptr, "globalPid"), column(&C::event_id, nullptr, "eventId"),
      column(&C::device_id, nullptr, "deviceId"), column(&C::context_id, nullptr, "contextId"),
      column(&C::stream_id, nullptr, "streamId"), column(&C::correlation_id, nullptr, "correlationId"),
      column(&C::sync_type, nullptr, "syncType"));
};

template <>
struct ColumnDefs<NvtxColumns> {
  using C = NvtxColumns;
  // The nsys reader reads NVTX rows itself: an open range's NULL end, texts resolved through
  // registered strings before inline ones, and one payload from six typed columns.
  static constexpr auto all = std::make_tuple(
      not_from_nsys(column(&C::start_ns, "start_ns")), not_from_nsys(column(&C::end_ns, "end_ns")),
      not_from_nsys(column(&C::global_tid, "global_tid")), not_from_nsys(column(&C::event_type, "event_type")),
      not_from_nsys(column(&C::domain_id, "domain_id")), not_from_nsys(string_column(&C::text, "text")),
      not_from_nsys(column(&C::color, "color")), not_from_nsys(column(&C::payload_kind, "payload_kind")),
      not_from_nsys(column(&C::payload_int, "payload_int")), not_from_nsys(column(&C::payload_double, "payload_double")),
      not_from_nsys(column(&C::end_global_tid, nullptr)), not_from_nsys(column(&C::category, nullptr)));
};

template <>
struct ColumnDefs<GpuSampleColumns> {
  using C = GpuSampleColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::time_ns, "time_ns", "timestamp"), column(&C::device_id, "device", "deviceId"),
      column(&C::sm_clock_mhz, "sm_clock_mhz", "smClockMHz", "-1"),
      column(&C::memory_clock_mhz, "memory_clock_mhz", "memClockMHz", "-1"),
      column(&C::temperature_c, "temperature_c", "temperatureC", "-1"),
      column(&C::gpu_util_percent, "gpu_util_percent", "gpuUtilPercent", "-1"),
      column(&C::memory_util_percent, "memory_util_percent", "memUtilPercent", "-1"),
      column(&C::power_mw, "power_mw", "powerMilliwatts", "-1"),
      column(&C::memory_used_bytes, "memory_used_bytes", "memUsedBytes", "-1"),
      column(&C::pcie_tx_kbps, "pcie_tx_kbps", "pcieTxKBps", "-1"), column(&C::pcie_rx_kbps, "pcie_rx_kbps", "pcieRxKBps", "-1"),
      column(&C::clock_event_reasons, "clock_event_reasons", "clockEventReasons"));
};

template <>
struct ColumnDefs<OsrtColumns> {
  using C = OsrtColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, nullptr, "start"), column(&C::end_ns, nullptr, "end"),
      column(&C::global_tid, nullptr, "globalTid"), string_column(&C::name, nullptr, "nameId"),
      column(&C::event_class, nullptr, "eventClass"));
};

template <>
struct ColumnDefs<OverheadColumns> {
  using C = OverheadColumns;
  static constexpr auto all = std::make_tuple(
      column(&C::start_ns, nullptr, "start"), column(&C::end_ns, nullptr, "end"),
      column(&C::global_tid, nullptr, "globalTid"), string_column(&C::name, nullptr, "nameId"));
};

// Calls f(def) for each column definition of Columns, in list order.
template <class Columns, class F>
void for_each_column_def(F&& f) {
  std::apply([&](const auto&... def) { (f(def), ...); }, ColumnDefs<Columns>::all);
}

}  // namespace kernscope
