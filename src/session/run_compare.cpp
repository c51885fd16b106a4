// compare: N traces side by side (engines, configs, batch sizes), one column each.
#include <sstream>

#include "analyses/diff/compare.hpp"
#include "render/diff_render.hpp"
#include "session/analysis_entry.hpp"
#include "session/figures_plan.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace compare_runner {
namespace {

Result<OpenOptions> plan(const Options&) { return figures_plan(); }

Result<Document> run_groups(const std::vector<TraceGroup>& groups, const Options& o, const Output&) {
  const auto labels = o.list("label");
  if (!labels.empty() && labels.size() != groups.size()) {
    return make_error(ErrorCode::kInvalidArgument, "compare: " + std::to_string(labels.size()) + " --label for " +
                                                       std::to_string(groups.size()) + " traces (give one per trace, in order)");
  }
  std::vector<TraceGroup> named = groups;
  for (std::size_t i = 0; i < labels.size(); ++i) named[i].label = labels[i];
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  std::string identity;
  auto sides = measure_groups(named, *rules, identity);
  if (!sides) return std::unexpected(sides.error());
  auto c = std::make_shared<const Comparison>(compare_sides(*sides));
  Document d;
  d.tables = {c->steps, c->classes};
  d.bare_tables = {0, 1};
  for (const auto& n : c->notes) d.notes.push_back(note_from("compare: ", n));
  d.json = [c](const std::vector<Table>&, const RenderOptions& r) { return render_compare_json(*c, r); };
  d.text = [c](const std::vector<Table>&, const RenderOptions& r) { return render_compare_text(*c, r); };
  return d;
}

}  // namespace
}  // namespace compare_runner

const AnalysisEntry& compare_entry() {
  using namespace compare_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "compare",
          .summary = "N traces side by side (engines, configs): step figures (TTFT, TPOT, GPU busy/idle, launch, sync) and "
                     "GPU time by operation class, one column per trace",
          .options = {{"label", 0, OptionKind::kList, "", "a column's name, once per trace in order (default: file stems)"},
                      {"rules", 0, OptionKind::kText, "", "extra CLASS<TAB>REGEX operation rules"}},
          .formats = table_format_names(),
          .time_unit = true,
          .filters = true,
          .shape = ResultShape::kTables,
          .trace_help = "two or more traces",
          .min_traces = 2,
          .max_traces = 0},
      plan, nullptr, run_groups};
  return entry;
}

}  // namespace kernscope::session
