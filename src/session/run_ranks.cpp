// ranks: a set of traces read as the ranks of one distributed run — collectives matched across
// ranks, clock offsets estimated from them, each collective's time split into wait and transfer,
// stragglers, comm/compute overlap, skew over time, and the collectives some rank never reached.
#include <algorithm>
#include <memory>

#include "ranks/ranks_set.hpp"
#include "ranks/ranks_skew.hpp"
#include "render/ranks_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace ranks_runner {
namespace {

// What a Python Trace must hold for run_groups; the CLI's path (run_paths) reads each trace as
// ranks::read_trace_digests does, with the same event kinds.
Result<OpenOptions> plan(const Options&) {
  OpenOptions open;
  open.kinds = bit(EventKind::kKernels) | bit(EventKind::kApiCalls) | bit(EventKind::kNvtx);  // NVTX: ProfilerStep#N
  // Kernels in detail: stream ids (the communicator when the trace names none); NVTX and API calls
  // in detail: each rank's steps, found as `kernscope steps` finds them.
  open.detail_kinds = bit(EventKind::kKernels) | bit(EventKind::kNvtx) | bit(EventKind::kApiCalls);
  return open;
}

Result<void> check(const Options& o) {
  const std::string clocks = o.text("clocks");
  if (clocks != "estimate" && clocks != "trust") {
    return make_error(ErrorCode::kInvalidArgument, "ranks: --clocks must be estimate or trust, not '" + clocks + "'");
  }
  if (o.integer("bins") < 1 || o.integer("bins") > 1000) return make_error(ErrorCode::kInvalidArgument, "ranks: --bins must be 1 to 1000");
  return {};
}

// The reduce, whichever way the digests came: the set analysed, its tables and its document.
Result<Document> reduce_set(ranks::RankSet set, const Options& o) {
  ranks::SkewOptions skew;
  skew.estimate_clocks = o.text("clocks") == "estimate";
  skew.time_bins = static_cast<int>(o.integer("bins"));
  struct Kept {
    ranks::RankSet set;
    ranks::RanksAnalysis analysis;
  };
  auto kept = std::make_shared<Kept>();
  kept->set = std::move(set);
  kept->analysis = ranks::analyze_ranks(kept->set, skew);

  Document d;
  d.tables = ranks::ranks_tables(kept->set, kept->analysis);
  const std::string wanted = o.text("table");
  const auto table = std::find_if(d.tables.begin(), d.tables.end(), [&](const Table& t) { return t.report == wanted; });
  if (table == d.tables.end()) {
    return make_error(ErrorCode::kInvalidArgument, "ranks: --table must be ranks, collective_kinds, stragglers, collectives, "
                                                   "incomplete, skew_over_time, skew_by_step, rank_steps, slowest_rank_steps or skew_by_layer, not '" + wanted + "'");
  }
  d.bare_tables = {static_cast<std::size_t>(table - d.tables.begin())};  // csv/tsv: the one table asked for
  // One table has no room for it: what is not trusted goes to stderr (the rows' Trusted column says it too).
  if (!kept->analysis.distrust.empty()) {
    d.notes.push_back({"verdicts_withheld", NoteSeverity::kInfo,
                       "ranks: NOT TRUSTED: no straggler or hang verdict is given; the tables hold the figures as matched"});
    for (const auto& why : kept->analysis.distrust) d.notes.push_back(note_from("ranks: ", why));
  }
  d.text = [kept](const std::vector<Table>&, const RenderOptions&) { return ranks::ranks_text(kept->set, kept->analysis); };
  d.json = [kept](const std::vector<Table>&, const RenderOptions& r) { return ranks::ranks_json(kept->set, kept->analysis, r.time_unit); };
  return d;
}

// Traces already loaded (Python's): each digested in turn.
Result<Document> run_groups(const std::vector<TraceGroup>& groups, const Options& o, const Output&) {
  if (auto ok = check(o); !ok) return std::unexpected(ok.error());
  std::vector<ranks::RankDigest> digests;
  for (const auto& group : groups) {
    for (const Trace* trace : group.runs) {
      auto digested = ranks::digest_opened_trace(*trace);
      if (!digested) return std::unexpected(digested.error());
      for (auto& d : *digested) digests.push_back(std::move(d));
    }
  }
  return reduce_set(ranks::assemble_rank_set(std::move(digests)), o);
}

// The CLI's path: each trace read, digested and dropped (ranks::read_rank_set), so memory follows
// the digests, not the traces; the same digests and reduce as run_groups.
Result<Document> run_paths(const std::vector<std::vector<std::string>>& path_groups, const Options& o, const Output&) {
  if (auto ok = check(o); !ok) return std::unexpected(ok.error());
  std::vector<std::string> paths;
  for (const auto& group : path_groups) paths.insert(paths.end(), group.begin(), group.end());
  auto set = ranks::read_rank_set(paths);
  if (!set) return std::unexpected(set.error());
  return reduce_set(std::move(*set), o);
}

}  // namespace
}  // namespace ranks_runner

const AnalysisEntry& ranks_entry() {
  using namespace ranks_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "ranks",
          .summary = "Traces of one distributed run read as ranks (per-rank PyTorch-profiler or nsys files, or one nsys export "
                     "with several processes): NCCL collectives matched across ranks, clock offsets estimated from their ends, "
                     "wait (last arrival - a rank's arrival) apart from transfer (last arrival -> end), bus bandwidth, "
                     "stragglers, comm/compute overlap, skew over time, collectives some rank never reached",
          .options = {{"clocks", 0, OptionKind::kText, "estimate",
                       "estimate (offsets from collective ends) or trust (take the traces' clocks as they are)"},
                      {"bins", 0, OptionKind::kInteger, "10", "time bins of the skew-over-time view"},
                      {"table", 0, OptionKind::kText, "collectives",
                       "the table CSV/TSV writes: ranks, collective_kinds, stragglers, collectives, incomplete, skew_over_time, skew_by_step, "
                       "rank_steps, slowest_rank_steps, skew_by_layer"}},
          .formats = table_format_names("text"),
          .time_unit = true,
          .filters = false,  // each rank has its own clock: one time window means different moments
          .shape = ResultShape::kTables,
          .trace_help = "the ranks' traces: a folder, a glob pattern or files",
          .min_traces = 1,
          .max_traces = 0},
      plan, nullptr, run_groups, run_paths};
  return entry;
}

}  // namespace kernscope::session
