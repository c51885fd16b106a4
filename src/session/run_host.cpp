// host: where the host thread's time goes per group of steps (sampled stacks by function), Python
// garbage collections per step, and the stacks for flame-graph tools.
#include <sstream>

#include "analyses/steps/host_profile.hpp"
#include "render/host_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace host_runner {
namespace {

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  if (o.integer("limit") < 0) return make_error(ErrorCode::kInvalidArgument, "host: --limit must be 0 or more");
  if (o.integer("thread") < 0) return make_error(ErrorCode::kInvalidArgument, "host: --thread must be a thread id");
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  HostProfileOptions options;
  options.steps = step_options_of(o);
  options.thread = o.integer("thread");
  auto analysed = analyze_host(trace, *rules, options);
  if (!analysed) return std::unexpected(analysed.error());
  auto profile = std::make_shared<const HostProfile>(std::move(*analysed));
  Document d;
  d.tables.push_back(host_groups_table(*profile));
  d.tables.push_back(host_functions_table(*profile, static_cast<std::size_t>(o.integer("limit"))));
  d.tables.push_back(host_steps_table(*profile));
  d.bare_tables = {1};  // CSV/TSV: one table, the functions
  d.json = [profile](const std::vector<Table>& tables, const RenderOptions& r) { return render_host_json(tables, *profile, r); };
  d.text = [profile](const std::vector<Table>& tables, const RenderOptions& r) { return render_host_text(tables, *profile, r); };
  // The stacks for flame-graph tools; the trace outlives the document's writing (the registry holds it).
  d.own_formats["collapsed"] = [profile, &trace](const std::vector<Table>&, const RenderOptions&) {
    return render_collapsed_stacks(trace, *profile);
  };
  d.own_formats["speedscope"] = [profile, &trace](const std::vector<Table>&, const RenderOptions&) {
    return render_speedscope(trace, *profile);
  };
  return d;
}

}  // namespace
}  // namespace host_runner

const AnalysisEntry& host_entry() {
  using namespace host_runner;
  static std::vector<OptionSpec> options = [] {
    auto o = step_option_specs();
    o.push_back({"thread", 0, OptionKind::kInteger, "0", "host thread id to analyse (0: the thread that launches most)"});
    o.push_back({"limit", 0, OptionKind::kInteger, "15", "functions per group of steps (0: all)"});
    return o;
  }();
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "host",
          .summary = "Host side per step: time by Python/native function from sampled stacks (own and total), beside "
                     "launch and sync time; Python garbage collections per step and whether they explain slow steps. "
                     "--format collapsed (flame-graph tools) or speedscope writes the stacks",
          .options = options,
          .formats = table_formats_and({"collapsed", "speedscope"}),
          .time_unit = true,
          .filters = true,
          .shape = ResultShape::kTables},
      summary_columns_plan, run};
  return entry;
}

}  // namespace kernscope::session
