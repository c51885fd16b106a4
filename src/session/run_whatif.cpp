// whatif: each step replayed with a change (graphs, no-sync, scale, overlap-copies, overlap-comm,
// host) and its time predicted against the traced one (whatif.hpp has the model).
#include <memory>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/whatif/whatif.hpp"
#include "ranks/ranks_whatif.hpp"
#include "render/json_writer.hpp"
#include "render/whatif_render.hpp"
#include "session/analysis_entry.hpp"
#include "session/whatif_options.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace whatif_runner {
namespace {

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto replayed = replay_with_changes(trace, o, false);
  if (!replayed) return std::unexpected(replayed.error());
  auto kept = std::make_shared<const ReplayedTrace>(std::move(*replayed));
  Document d;
  d.tables.push_back(whatif_groups_table(kept->result));
  d.tables.push_back(whatif_steps_table(kept->steps, kept->result));
  d.bare_tables = {1};  // CSV/TSV: one row per step
  d.json = [kept](const std::vector<Table>&, const RenderOptions&) {
    JsonWriter json(0);
    write_whatif_json(json, kept->result);
    return json.finish();
  };
  d.text = [kept](const std::vector<Table>&, const RenderOptions&) { return render_whatif_text(kept->result); };
  return d;
}

// Several traces: the ranks of one run replayed together where their clocks can be trusted
// (ranks/ranks_whatif.hpp), each with its own --change list.
Result<Document> run_ranks_together(const std::vector<const Trace*>& traces, const Options& o) {
  // What the document's writers read is kept with them: the ranks' analyses and results, and the
  // rules their contexts refer to.
  struct Kept {
    OpRuleSet rules;
    ranks::RanksReplay replay;
    std::vector<RankWhatIf> ranks;  // one label for every output
  };
  auto kept = std::make_shared<Kept>();
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  kept->rules = std::move(*rules);
  std::vector<ranks::RankReplayInput> inputs;
  for (const Trace* trace : traces) {
    auto changes = whatif_changes_of(o, *trace, kept->rules);
    if (!changes) return std::unexpected(changes.error());
    inputs.push_back({trace, std::move(*changes)});
  }
  auto replayed = ranks::replay_ranks(inputs, kept->rules, step_options_of(o));
  if (!replayed) return std::unexpected(replayed.error());
  kept->replay = std::move(*replayed);
  for (const auto& in : kept->replay.ranks) {
    kept->ranks.push_back(RankWhatIf{in->rank >= 0 ? in->rank : static_cast<std::int64_t>(in->given), in->trace->source.path,
                                     in->offset_ns, &in->steps, &in->result});
  }
  Document d;
  d.tables = whatif_ranks_tables(kept->ranks);
  d.bare_tables = {1};  // CSV/TSV: one row per step
  d.json = [kept](const std::vector<Table>&, const RenderOptions&) {
    JsonWriter json(0);
    write_whatif_ranks_json(json, kept->replay.together, kept->replay.notes, kept->ranks);
    return json.finish();
  };
  d.text = [kept](const std::vector<Table>&, const RenderOptions&) {
    return render_whatif_ranks_text(kept->replay.notes, kept->ranks);
  };
  return d;
}

// One trace as `run` reads it; several as the ranks of one run.
Result<Document> run_groups(const std::vector<TraceGroup>& groups, const Options& o, const Output& output) {
  std::vector<const Trace*> traces;
  for (const auto& group : groups) traces.insert(traces.end(), group.runs.begin(), group.runs.end());
  if (traces.size() == 1) return run(*traces.front(), o, output);
  return run_ranks_together(traces, o);
}

}  // namespace
}  // namespace whatif_runner

const AnalysisEntry& whatif_entry() {
  using namespace whatif_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{.name = "whatif",
                   .summary = "Replay each step with a change (graphs, no-sync, scale, overlap-copies, overlap-comm, host) and predict its time",
                   .options = whatif_option_specs(),
                   .formats = table_format_names(),
                   .time_unit = true,
                   .filters = true,
                   .shape = ResultShape::kTables,
                   .trace_help = "a trace, or the ranks of one run (a file each: replayed together, their clocks aligned by their collectives)",
                   .min_traces = 1,
                   .max_traces = 0,
                   .one_trace_too = true},
      replay_plan, run, run_groups};
  return entry;
}

}  // namespace kernscope::session
