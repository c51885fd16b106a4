// The result of a report: typed columns and rows of cells. Renderers decide how a unit is shown
// (ns vs us, bytes as MB), so analyses stay in exact integer nanoseconds and bytes.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kernscope {

enum class Unit {
  kNone,
  kDuration,    // nanoseconds, shown in the chosen time unit
  kTimestamp,   // nanoseconds since the session start, shown in the chosen time unit
  kBytes,       // shown as MB (10^6 bytes), as nsys does
  kThroughput,  // bytes per second, shown as MB/s
  kPercent,
};

struct Column {
  std::string name;
  Unit unit = Unit::kNone;
};

using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;

struct Table {
  std::string report;  // e.g. "cuda_gpu_kern_sum"
  std::string title;   // e.g. "CUDA GPU Kernel Summary"
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

}  // namespace kernscope
