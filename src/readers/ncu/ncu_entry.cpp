// Nsight Compute CSV exports in the reader registry: `kernscope roofline ncu.csv` (and the other
// analyses) open them as a trace of their profiled kernels (ncu_trace.hpp).
#include <string_view>

#include "readers/ncu/ncu_report.hpp"
#include "readers/ncu/ncu_trace.hpp"
#include "readers/reader_registry.hpp"

namespace kernscope::readers {
namespace {

// ncu's CSV header ("ID","Process ID",... or "ID","Kernel Name",...) at a line start: yes. ncu's
// own message lines first: maybe (the header can come after the program's output).
Match sniff(const Probe& probe) {
  const std::string_view head(reinterpret_cast<const char*>(probe.head.data()), probe.head.size());
  std::size_t pos = head.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  bool ncu_messages = false;
  while (pos < head.size()) {
    const std::size_t end = std::min(head.find('\n', pos), head.size());
    const std::string_view line = head.substr(pos, end - pos);
    if (line.starts_with("\"ID\",")) return Match::kYes;
    if (line.starts_with("==PROF==") || line.starts_with("==WARNING==") || line.starts_with("==ERROR==")) ncu_messages = true;
    pos = end + 1;
  }
  return ncu_messages ? Match::kMaybe : Match::kNo;
}

Result<Trace> read(const Probe& probe, const OpenOptions&) {
  auto report = ncu::read_ncu_csv(probe.path);
  if (!report) return std::unexpected(report.error());
  return ncu::trace_from_ncu(*report);
}

}  // namespace

ReaderEntry ncu_csv_reader() { return {"ncu-csv", 5, sniff, read}; }

}  // namespace kernscope::readers
