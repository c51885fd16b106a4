// ops: GPU time by operation class (GEMM, attention, norm, ... communication).
#include <fmt/format.h>

#include <sstream>

#include "kernscope/op_classes.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace ops_runner {
namespace {

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;
  open.kinds = bit(EventKind::kKernels) | bit(EventKind::kMemcpy) | bit(EventKind::kMemset) | bit(EventKind::kApiCalls) |
               bit(EventKind::kNvtx) | bit(EventKind::kGraphExecs);
  open.detail_kinds = 0;
  return open;
}

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  auto result = classify_operations(trace, *rules);
  if (!result) return std::unexpected(result.error());
  Document d;
  d.tables.push_back(ops_table(*result));
  if (o.flag("detail")) {
    d.tables.push_back(ops_detail_table(*result));
    d.bare_tables = {0, 1};
  }
  std::int64_t whole_graphs = 0;
  for (const auto& c : result->classes) {
    if (c.op_class == kWholeGraphClass) whole_graphs = c.instances;
  }
  d.text = [phase_source = result->phase_source, other_share = result->other_share, setup_note = result->setup_note, whole_graphs](
               const std::vector<Table>& tables, const RenderOptions& options) {
    std::ostringstream text;
    for (const auto& table : tables) render(text, table, options);
    text << "\nAttention phases from: " << phase_source << "; GPU time classed 'other': "
         << static_cast<int>(other_share * 1000 + 0.5) / 10.0 << " %\n";
    if (!setup_note.empty()) text << "Note: " << setup_note << "\n";
    if (whole_graphs > 0) {
      text << "Note: " << whole_graphs << " CUDA graph executions were traced as whole graphs: their GPU time is the class "
           << kWholeGraphClass << ", their kernels are not in the other classes (record with --cuda-graph-trace node to itemize them)\n";
    }
    return text.str();
  };
  return d;
}

}  // namespace
}  // namespace ops_runner

const AnalysisEntry& ops_entry() {
  using namespace ops_runner;
  static const AnalysisEntry entry{
      table_analysis("ops",
                     "GPU time by operation class (GEMM, GEMV, attention, norm, RoPE, ...)",
                     {{"rules", 0, OptionKind::kText, "", "extra CLASS<TAB>REGEX rules, tried before the built-in ones"},
                      {"detail", 0, OptionKind::kFlag, "", "also list every kernel name with its class and the rule that matched"}}),
      plan, run};
  return entry;
}

}  // namespace kernscope::session
