// The ranks of one run replayed together: see ranks_whatif.hpp.
#include "ranks/ranks_whatif.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analyses/steps/analyze_steps.hpp"
#include "ranks/ranks_set.hpp"
#include "ranks/ranks_skew.hpp"

namespace kernscope::ranks {

Result<RanksReplay> replay_ranks(const std::vector<RankReplayInput>& inputs, const OpRuleSet& rules, const StepOptions& step_options) {
  RanksReplay out;
  std::vector<std::unique_ptr<ReplayedRank>>& ranks = out.ranks;
  std::vector<RankDigest> digests;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> trace_of;  // (path, process) -> input
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ReplayedRank& in = *ranks.emplace_back(std::make_unique<ReplayedRank>());
    in.trace = inputs[i].trace;
    in.given = i;
    in.changes = inputs[i].changes;
    in.context = std::make_unique<TraceContext>(*in.trace, rules);
    auto steps = analyze_steps(*in.context, step_options);
    if (!steps) return make_error(steps.error().code, in.trace->source.path + ": " + steps.error().message);
    in.steps = std::move(*steps);
    in.accounting = account_steps(*in.context, in.steps);
    auto digested = digest_opened_trace(*in.trace);
    if (!digested) return std::unexpected(digested.error());
    for (auto& d : *digested) {
      if (!trace_of.try_emplace({d.path, d.global_pid}, i).second) {
        return make_error(ErrorCode::kInvalidArgument, "whatif: " + d.path + " is given twice");
      }
      digests.push_back(std::move(d));
    }
  }
  const RankSet set = assemble_rank_set(std::move(digests));
  const RanksAnalysis skew = analyze_ranks(set);
  // A trace's offset: its first rank's (the processes of one file share its clock).
  std::vector<bool> placed(ranks.size(), false);
  for (std::size_t r = 0; r < set.ranks.size(); ++r) {
    const auto it = trace_of.find({set.ranks[r].path, set.ranks[r].global_pid});
    if (it == trace_of.end() || placed[it->second]) continue;
    placed[it->second] = true;
    ranks[it->second]->rank = set.ranks[r].rank;
    if (r < skew.offsets.size()) ranks[it->second]->offset_ns = skew.offsets[r].offset_ns;
  }
  // The traces' rank numbers, for the output and to refuse a set where two traces claim one rank.
  std::map<std::int64_t, std::size_t> claims;
  for (const auto& in : ranks) {
    if (in->rank >= 0) ++claims[in->rank];
  }
  std::string why_apart;
  for (const auto& d : skew.distrust) why_apart += (why_apart.empty() ? "" : "; ") + d.text;
  if (skew.verdicts_withheld() && skew.distrust.empty()) why_apart = "the ranks' clocks or their matching are not trusted";
  for (const auto& [rank, count] : claims) {
    if (count > 1) why_apart += (why_apart.empty() ? "" : "; ") + std::to_string(count) + " traces are rank " + std::to_string(rank);
  }
  if (std::any_of(placed.begin(), placed.end(), [](bool p) { return !p; })) {
    why_apart += std::string(why_apart.empty() ? "" : "; ") + "a trace is not a rank of the set";
  }
  bool& together = out.together;
  together = why_apart.empty();
  if (together) {
    std::vector<WhatIfTrace> replayed;
    for (const auto& in : ranks) {
      replayed.push_back(WhatIfTrace{in->context.get(), &in->steps, &in->accounting, static_cast<std::int64_t>(std::llround(in->offset_ns)), in->changes});
    }
    std::vector<WhatIfResult> results = what_if_together(replayed, WhatIfOptions{});  // the changes are each trace's own
    // Trusted clocks, but no collective the replay could pair (each trace's own are outside the
    // steps, or ran a different number of times): each trace was replayed alone after all.
    together = !results.empty() && results.front().linked_collectives > 0;
    for (std::size_t i = 0; i < results.size() && i < ranks.size(); ++i) ranks[i]->result = std::move(results[i]);
    out.notes.push_back(together ? Note{"ranks_replayed_together", NoteSeverity::kInfo,
                                        "ranks: " + std::to_string(ranks.size()) + " traces put on one clock by the ranks' offsets (" + skew.matching + ")",
                                        static_cast<std::int64_t>(ranks.size())}
                                 : Note{"ranks_replayed_apart", NoteSeverity::kInfo,
                                        "ranks: each trace replayed apart: no collective of their steps could be paired across them"});
  } else {
    out.notes.push_back({"ranks_replayed_apart", NoteSeverity::kInfo,
                         "ranks: each trace replayed apart, its collectives not waiting for the other ranks': " + why_apart});
    for (const auto& in : ranks) {
      WhatIfOptions own;
      own.changes = in->changes;
      in->result = what_if(*in->context, in->steps, in->accounting, own);
    }
  }
  // Ranks in order (their number, else the order given).
  std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a->rank < b->rank; });
  return out;
}

}  // namespace kernscope::ranks
