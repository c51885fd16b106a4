// whatif: each step replayed with a change (graphs, no-sync, scale, overlap-copies, overlap-comm,
// host) and its time predicted against the traced one (whatif.hpp has the model).
#include <map>
#include <memory>

#include "analyses/steps/analyze_steps.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/whatif/whatif.hpp"
#include "ranks/ranks_set.hpp"
#include "ranks/ranks_skew.hpp"
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

// One trace's analyses, kept while the traces are replayed together.
struct RankInput {
  const Trace* trace = nullptr;
  std::unique_ptr<TraceContext> context;
  StepAnalysis steps;
  StepAccounting accounting;
  std::vector<WhatIfChange> changes;
  std::int64_t rank = -1;
  double offset_ns = 0;
};

// Several traces: the ranks of one run, each file its own clock. Their clock offsets and whether
// they can be trusted come from the ranks analysis (collectives matched across ranks, ends lined
// up); trusted, the ranks are replayed as one graph whose collectives wait for each other, else
// each apart, and the output says why.
Result<Document> run_ranks_together(const std::vector<const Trace*>& traces, const Options& o) {
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  std::vector<RankInput> inputs(traces.size());
  std::vector<ranks::RankDigest> digests;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> trace_of;  // (path, process) -> input
  for (std::size_t i = 0; i < traces.size(); ++i) {
    RankInput& in = inputs[i];
    in.trace = traces[i];
    auto changes = whatif_changes_of(o, *in.trace, *rules);
    if (!changes) return std::unexpected(changes.error());
    in.changes = std::move(*changes);
    in.context = std::make_unique<TraceContext>(*in.trace, *rules);
    auto steps = analyze_steps(*in.context, step_options_of(o));
    if (!steps) return make_error(steps.error().code, in.trace->source.path + ": " + steps.error().message);
    in.steps = std::move(*steps);
    in.accounting = account_steps(*in.context, in.steps);
    auto digested = ranks::digest_opened_trace(*in.trace);
    if (!digested) return std::unexpected(digested.error());
    for (auto& d : *digested) {
      if (!trace_of.try_emplace({d.path, d.global_pid}, i).second) {
        return make_error(ErrorCode::kInvalidArgument, "whatif: " + d.path + " is given twice");
      }
      digests.push_back(std::move(d));
    }
  }
  const ranks::RankSet set = ranks::assemble_rank_set(std::move(digests));
  const ranks::RanksAnalysis skew = ranks::analyze_ranks(set);
  std::vector<std::string> notes;
  // A trace's offset: its first rank's (the processes of one file share its clock).
  std::vector<bool> placed(inputs.size(), false);
  for (std::size_t r = 0; r < set.ranks.size(); ++r) {
    const auto it = trace_of.find({set.ranks[r].path, set.ranks[r].global_pid});
    if (it == trace_of.end() || placed[it->second]) continue;
    placed[it->second] = true;
    inputs[it->second].rank = set.ranks[r].rank;
    if (r < skew.offsets.size()) inputs[it->second].offset_ns = skew.offsets[r].offset_ns;
  }
  // The traces' rank numbers, for the output and to refuse a set where two traces claim one rank.
  std::map<std::int64_t, std::size_t> claims;
  for (const RankInput& in : inputs) {
    if (in.rank >= 0) ++claims[in.rank];
  }
  std::string why_apart;
  for (const auto& d : skew.distrust) why_apart += (why_apart.empty() ? "" : "; ") + d;
  if (skew.verdicts_withheld() && skew.distrust.empty()) why_apart = "the ranks' clocks or their matching are not trusted";
  for (const auto& [rank, count] : claims) {
    if (count > 1) why_apart += (why_apart.empty() ? "" : "; ") + std::to_string(count) + " traces are rank " + std::to_string(rank);
  }
  if (std::any_of(placed.begin(), placed.end(), [](bool p) { return !p; })) {
    why_apart += std::string(why_apart.empty() ? "" : "; ") + "a trace is not a rank of the set";
  }
  bool together = why_apart.empty();
  std::vector<WhatIfResult> results;
  if (together) {
    std::vector<WhatIfTrace> replayed;
    for (const RankInput& in : inputs) {
      replayed.push_back(WhatIfTrace{in.context.get(), &in.steps, &in.accounting, static_cast<std::int64_t>(std::llround(in.offset_ns)), in.changes});
    }
    results = what_if_together(replayed, WhatIfOptions{});  // the changes are each trace's own
    // Trusted clocks, but no collective the replay could pair (each trace's own are outside the
    // steps, or ran a different number of times): each trace was replayed alone after all.
    together = !results.empty() && results.front().linked_collectives > 0;
    notes.push_back(together ? "ranks: " + std::to_string(inputs.size()) + " traces put on one clock by the ranks' offsets (" + skew.matching + ")"
                             : "ranks: each trace replayed apart: no collective of their steps could be paired across them");
  } else {
    notes.push_back("ranks: each trace replayed apart, its collectives not waiting for the other ranks': " + why_apart);
    for (const RankInput& in : inputs) {
      WhatIfOptions own;
      own.changes = in.changes;
      results.push_back(what_if(*in.context, in.steps, in.accounting, own));
    }
  }
  // Ranks in order (their number, else the order given), each with one label for every output. What
  // the document's writers read is kept with them: the inputs (steps) and the results.
  struct Kept {
    std::vector<RankInput> inputs;
    std::vector<WhatIfResult> results;
    std::vector<RankWhatIf> ranks;
  };
  auto kept = std::make_shared<Kept>();
  kept->inputs = std::move(inputs);
  kept->results = std::move(results);
  std::vector<std::size_t> order(kept->inputs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return kept->inputs[a].rank < kept->inputs[b].rank; });
  for (const std::size_t i : order) {
    const RankInput& in = kept->inputs[i];
    kept->ranks.push_back(RankWhatIf{in.rank >= 0 ? in.rank : static_cast<std::int64_t>(i), in.trace->source.path, in.offset_ns,
                                     &in.steps, &kept->results[i]});
  }
  Document d;
  d.tables = whatif_ranks_tables(kept->ranks);
  d.bare_tables = {1};  // CSV/TSV: one row per step
  d.json = [kept, together, notes](const std::vector<Table>&, const RenderOptions&) {
    JsonWriter json(0);
    write_whatif_ranks_json(json, together, notes, kept->ranks);
    return json.finish();
  };
  d.text = [kept, notes](const std::vector<Table>&, const RenderOptions&) { return render_whatif_ranks_text(notes, kept->ranks); };
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
