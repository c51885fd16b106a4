// tail: tail-aware statistics per kernel, API call or NVTX range.
#include <sstream>

#include "analyses/tail.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace tail_runner {
namespace {

Result<OpenOptions> plan(const Options& o) {
  auto subject = parse_tail_subject(o.text("by"));
  if (!subject) return std::unexpected(subject.error());
  OpenOptions open;
  open.kinds = *subject == TailSubject::kKernel ? bit(EventKind::kKernels)
               : *subject == TailSubject::kApi  ? bit(EventKind::kApiCalls)
                                                : bit(EventKind::kNvtx);
  open.detail_kinds = 0;
  return open;
}

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto subject = parse_tail_subject(o.text("by"));
  if (!subject) return std::unexpected(subject.error());
  if (o.integer("limit") < 0) return make_error(ErrorCode::kInvalidArgument, "tail: --limit must be 0 or more");
  auto result = tail_statistics(trace, *subject);
  if (!result) return std::unexpected(result.error());
  Document d;
  if (result->by_total.empty()) {
    d.messages.push_back("tail: no events of that kind in the trace");
    return d;
  }
  const auto limit = static_cast<std::size_t>(o.integer("limit"));
  // Text: both tables; CSV/TSV: one, by total time.
  d.tables.push_back(tail_table(result->by_total, *subject, false, limit));
  d.tables.push_back(tail_table(result->by_tail_score, *subject, true, limit));
  d.json = [](const std::vector<Table>& tables, const RenderOptions& options) {
    // {"by_total": [...], "tail_candidates": [...]}: the two views of the same rows.
    return named_tables_json({{"by_total", &tables[0]}, {"tail_candidates", &tables[1]}}, options);
  };
  return d;
}

}  // namespace
}  // namespace tail_runner

const AnalysisEntry& tail_entry() {
  using namespace tail_runner;
  static const AnalysisEntry entry{
      table_analysis("tail",
                     "Tail statistics (p50/p95/p99/max, tail score) per kernel, API call or NVTX range. Tail score = max x "
              "log2(count + 1) x max(1, max/p50): high for slow outliers that recur. Flags: outliers (max/p50 > 2), "
              "systematic-tail (p99/p50 > 1.5), rare-blocker (a top-10 tail score under 1 % of total time), allocation, "
              "synchronization (what the call does)",
                     {{"by", 0, OptionKind::kText, "kernel", "kernel, api or nvtx"},
                      {"limit", 0, OptionKind::kInteger, "20", "rows per table (0: all)"}}),
      plan, run};
  return entry;
}

}  // namespace kernscope::session
