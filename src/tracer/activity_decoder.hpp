// Turns CUPTI activity records (the real CUpti_Activity* structures of CUDA 13's CUPTI) into the
// tracer's rows. Pure: no CUPTI calls, so it is unit-tested with records built in memory.
#pragma once

#include <atomic>

#include <cupti_activity.h>

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tracer/tracer_records.hpp"

namespace kernscope::tracer {

class ActivityDecoder {
 public:
  // `api_name(driver, cbid)` names a runtime (driver=false) or driver API call, as
  // cuptiGetCallbackName does ("cudaLaunchKernel_v7000").
  using ApiNamer = std::function<std::string(bool driver, std::uint32_t cbid)>;

  ActivityDecoder(StringPool& strings, ApiNamer api_name) : strings_(strings), api_name_(std::move(api_name)) {}

  // Appends the record's row to `out`. NVTX range starts wait here for their end.
  void decode(const CUpti_Activity* record, RecordBatch& out);
  // CUPTI numbers correlations and NVTX markers from 1 again each time it is attached anew (a
  // paused tracer detaches it between windows): ids decoded after this are moved past every id seen
  // before, so that a launch call and its kernel still pair up, and only they, across windows.
  void new_epoch();
  // Ranges still open (at the end of the trace): written with no end, like nsys does.
  void flush_open_ranges(RecordBatch& out);

 private:
  StringId api(bool driver, std::uint32_t cbid);
  struct KernelNames {
    StringId demangled, short_name, mangled;
  };
  const KernelNames& kernel_names(const char* mangled);
  void marker(const CUpti_ActivityMarker2& m, RecordBatch& out);

  StringPool& strings_;
  ApiNamer api_name_;
  std::unordered_map<std::uint64_t, StringId> api_names_;  // (driver << 32 | cbid) -> name
  std::unordered_map<std::uint32_t, NvtxRow> open_ranges_;  // marker id -> start
  std::unordered_map<std::string, KernelNames> kernel_names_;  // CUPTI gives mangled names
  // new_epoch(): set on the thread that attaches CUPTI, while the collector has nothing to decode.
  std::atomic<std::uint32_t> correlation_base_{0}, marker_base_{0}, max_correlation_{0}, max_marker_{0};
  std::uint32_t correlation(std::uint32_t id);
  std::uint32_t marker_id(std::uint32_t id);
};

// CUPTI's memory kinds (unknown, pageable, pinned, device...) in nsys's numbering (pageable 0 ... unknown 7).
std::int32_t nsys_memory_kind(std::uint32_t cupti_kind);

}  // namespace kernscope::tracer
