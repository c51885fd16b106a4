// whatif: each step replayed with a change (graphs, no-sync, scale, overlap-copies, overlap-comm,
// host) and its time predicted against the traced one (whatif.hpp has the model).
#include <sstream>

#include <map>
#include <memory>

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

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;  // every column: the replay reads streams, correlations and copy sizes
  open.kernel_name_variants = false;
  return open;
}

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  auto changes = whatif_changes_of(o, trace, *rules);
  if (!changes) return std::unexpected(changes.error());
  const TraceContext context(trace, *rules);
  auto steps = analyze_steps(context, step_options_of(o));
  if (!steps) return std::unexpected(steps.error());
  const StepAccounting accounting = account_steps(context, *steps);
  WhatIfOptions options;
  options.changes = *changes;
  const WhatIfResult result = what_if(context, *steps, accounting, options);
  AnalysisOutput out;
  out.tables.push_back(whatif_groups_table(result));
  out.tables.push_back(whatif_steps_table(*steps, result));
  if (output.frames()) return out;
  const Format format = output.table_format();
  std::ostringstream text;
  if (format == Format::kJson) {
    JsonWriter json(0);
    write_whatif_json(json, result);
    text << json.finish();
  } else if (format == Format::kTable) {
    text << render_whatif_text(result);
  } else {
    render(text, out.tables[1], RenderOptions{format, output.time_unit});  // CSV/TSV: one row per step
  }
  out.text = text.str();
  return out;
}

// Each rank's tables with a Rank column in front.
void append_with_rank(Table& into, const Table& part, std::int64_t rank) {
  if (into.columns.empty()) {
    into = part;
    into.rows.clear();
    into.columns.insert(into.columns.begin(), Column{"Rank"});
  }
  for (auto row : part.rows) {
    row.insert(row.begin(), Cell{rank});
    into.rows.push_back(std::move(row));
  }
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
Result<AnalysisOutput> run_ranks_together(const std::vector<const Trace*>& traces, const Options& o, const Output& output) {
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
  const bool together = !skew.verdicts_withheld() && std::all_of(placed.begin(), placed.end(), [](bool p) { return p; });
  std::vector<WhatIfResult> results;
  const WhatIfOptions options;  // the changes are each trace's own (WhatIfTrace::changes)
  if (together) {
    std::vector<WhatIfTrace> replayed;
    for (const RankInput& in : inputs) {
      replayed.push_back(WhatIfTrace{in.context.get(), &in.steps, &in.accounting, static_cast<std::int64_t>(std::llround(in.offset_ns)), in.changes});
    }
    results = what_if_together(replayed, options);
    notes.push_back("ranks: " + std::to_string(inputs.size()) + " traces put on one clock by the ranks' offsets (" + skew.matching + ")");
  } else {
    std::string why;
    for (const auto& d : skew.distrust) why += (why.empty() ? "" : "; ") + d;
    if (why.empty()) why = "a trace holds no NCCL collective to align its clock by";
    notes.push_back("ranks: each trace replayed apart, its collectives not waiting for the other ranks': " + why);
    for (const RankInput& in : inputs) {
      WhatIfOptions own;
      own.changes = in.changes;
      results.push_back(what_if(*in.context, in.steps, in.accounting, own));
    }
  }
  // Ranks in order (their number, else the order given).
  std::vector<std::size_t> order(inputs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return inputs[a].rank < inputs[b].rank; });
  AnalysisOutput out;
  Table groups, steps_table;
  for (const std::size_t i : order) {
    const std::int64_t rank = inputs[i].rank >= 0 ? inputs[i].rank : static_cast<std::int64_t>(i);
    append_with_rank(groups, whatif_groups_table(results[i]), rank);
    append_with_rank(steps_table, whatif_steps_table(inputs[i].steps, results[i]), rank);
  }
  out.tables.push_back(std::move(groups));
  out.tables.push_back(std::move(steps_table));
  if (output.frames()) return out;
  const Format format = output.table_format();
  std::ostringstream text;
  if (format == Format::kJson) {
    JsonWriter json(0);
    json.begin_object();
    json.member("together", together);
    json.key("notes").begin_array();
    for (const auto& n : notes) json.value(n);
    json.end_array();
    json.key("ranks").begin_array();
    for (const std::size_t i : order) {
      json.begin_object().member("rank", inputs[i].rank).member("path", inputs[i].trace->source.path).member("offset_ns", inputs[i].offset_ns);
      json.key("whatif");
      write_whatif_json(json, results[i]);
      json.end_object();
    }
    json.end_array();
    json.end_object();
    text << json.finish();
  } else if (format == Format::kTable) {
    for (const auto& n : notes) text << n << "\n";
    for (const std::size_t i : order) {
      text << "\n== rank " << inputs[i].rank << ": " << inputs[i].trace->source.path << " ==\n" << render_whatif_text(results[i]);
    }
  } else {
    render(text, out.tables[1], RenderOptions{format, output.time_unit});  // CSV/TSV: one row per step
  }
  out.text = text.str();
  return out;
}

// One trace as `run` reads it; several as the ranks of one run.
Result<AnalysisOutput> run_groups(const std::vector<TraceGroup>& groups, const Options& o, const Output& output) {
  std::vector<const Trace*> traces;
  for (const auto& group : groups) traces.insert(traces.end(), group.runs.begin(), group.runs.end());
  if (traces.size() == 1) return run(*traces.front(), o, output);
  return run_ranks_together(traces, o, output);
}

}  // namespace
}  // namespace whatif_runner

const AnalysisEntry& whatif_entry() {
  using namespace whatif_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{.name = "whatif",
                   .summary = "Replay each step with a change (graphs, no-sync, scale, overlap-copies, overlap-comm, host) and predict its time",
                   .options = whatif_option_specs(),
                   .formats = {"table", "csv", "tsv", "json"},
                   .time_unit = true,
                   .filters = true,
                   .shape = ResultShape::kTables,
                   .trace_help = "a trace, or the ranks of one run (a file each: replayed together, their clocks aligned by their collectives)",
                   .min_traces = 1,
                   .max_traces = 0,
                   .one_trace_too = true},
      plan, run, run_groups};
  return entry;
}

}  // namespace kernscope::session
