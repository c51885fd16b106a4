// Timeline export for trace viewers: the Chrome trace-event JSON format, which ui.perfetto.dev and
// chrome://tracing both open. One track per device and stream and per CPU thread, NVTX ranges on
// their threads, flows from each launching API call to its GPU work, GPU samples as counter tracks,
// operation class and launch parameters in args. Events on one track are always well nested
// (what overlaps goes to an extra "overlap" track), and timestamps are exact: microseconds with
// three decimals, relative to baseTimeNanoseconds (which kernscope's reader adds back).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "kernscope/error.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// Both names write the same JSON dialect (the Chrome trace-event format as Perfetto reads it):
// "chrome" is kept for users who ask for it by that name.
enum class ExportFormat { kPerfetto, kChrome };
Result<ExportFormat> parse_export_format(std::string_view text);

struct ExportSummary {
  std::int64_t events = 0;          // slices and counter samples written
  std::int64_t flows = 0;           // launch -> GPU work arrows
  std::int64_t overlap_tracks = 0;  // extra tracks made for events that overlapped without nesting
};

// Writes to `out`; `path` ending in ".gz" is gzip-compressed by export_trace_file.
Result<ExportSummary> export_trace(const Trace& trace, const OpRuleSet& rules, std::ostream& out);
Result<ExportSummary> export_trace_file(const Trace& trace, const OpRuleSet& rules, const std::string& path,
                                        ExportFormat format);

}  // namespace kernscope
