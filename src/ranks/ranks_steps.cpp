// Per-rank steps (from each rank's own step windows) and the per-layer skew (ranks_steps.hpp).
#include "ranks/ranks_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "ranks/ranks_set.hpp"
#include "ranks/ranks_skew.hpp"
#include "analyses/steps/step_windows.hpp"
#include "kernscope/op_classes.hpp"

namespace kernscope::ranks {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// A step's group name: numbered steps are one group (step_group_name: ProfilerStep#N); the empty
// NVTX domain's leading ':' is dropped.
std::string group_name(std::string name) {
  if (name.starts_with(':')) name.erase(0, 1);
  return step_group_name(name);
}

}  // namespace

RankSteps rank_steps_of(const Trace& trace, std::int64_t global_pid) {
  RankSteps out;
  auto windows = report::find_step_windows(trace, StepOptions{});
  auto analysis = analyze_steps(trace, OpRuleSet::builtin(), StepOptions{});
  if (!windows || !analysis) {
    out.method = "no steps: " + (!windows ? windows.error().message : analysis.error().message);
    return out;
  }
  out.method = analysis->method;
  // analyze_steps keeps find_step_windows' order: step w is window w (its thread says its process).
  const auto& all = analysis->steps;
  if (all.size() != windows->windows.size()) {
    out.method = "no steps: the step analysis and its windows disagree";
    return out;
  }
  std::vector<std::size_t> mine;
  bool gpu_only = false;
  for (std::size_t w = 0; w < all.size(); ++w) {
    const auto tid = windows->windows[w].global_tid;
    gpu_only = gpu_only || tid == 0;
    if (global_pid == -1 || tid == 0 || process_key(tid) == global_pid) mine.push_back(w);
  }
  // Windows in GPU time only (the work's period, idle gaps) have no thread: in an export holding
  // several processes they were found over all of them, so every rank gets the same windows.
  if (gpu_only && global_pid != -1) out.method += " (over the whole export's GPU work: the same windows for every process in it)";
  if (mine.empty()) {
    out.method = "no steps in this rank's process (" + out.method + ")";
    return out;
  }
  // The group that describes the rank: its last decode group, else its most numerous group.
  std::map<std::pair<std::string, Phase>, std::vector<std::size_t>> groups;
  std::vector<std::pair<std::string, Phase>> order;
  for (std::size_t w : mine) {
    auto key = std::pair{group_name(all[w].name), all[w].phase};
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(w);
  }
  std::pair<std::string, Phase> chosen = order.front();
  bool decode = false;
  for (const auto& key : order) {
    if (key.second == Phase::kDecode) {
      chosen = key;
      decode = true;
    }
  }
  if (!decode) {
    for (const auto& key : order) {
      if (groups[key].size() >= groups[chosen].size()) chosen = key;
    }
  }
  out.name = chosen.first;
  out.phase = chosen.second;
  std::vector<std::int64_t> wall, span, kernel, period;
  TimeNs previous_gpu_end = 0;
  for (std::size_t w : groups[chosen]) {
    const Step& s = all[w];
    out.steps.push_back({s.start_ns, s.end_ns, s.gpu_span_ns});
    wall.push_back(s.wall_ns);
    kernel.push_back(s.kernel_ns);
    if (s.gpu_end_ns == 0) continue;
    span.push_back(s.gpu_span_ns);
    if (previous_gpu_end != 0) period.push_back(s.gpu_end_ns - previous_gpu_end);
    previous_gpu_end = s.gpu_end_ns;
  }
  out.wall = distribution(wall);
  out.gpu_span = distribution(span);
  if (decode) {
    // As `kernscope steps`: the step wall, unless the steps are asynchronous (GPU work outlasts
    // the host range), then the GPU period.
    const Distribution k = distribution(kernel), p = distribution(period);
    const bool asynchronous = k.p50 > 2 * out.wall.p50 && p.count > 0;
    out.tpot_ns = asynchronous ? p.p50 : out.wall.p50;
    out.tpot_from = asynchronous ? "GPU period" : "step wall";
  }
  return out;
}

std::int64_t step_index_at(const RankSteps& steps, TimeNs t) {
  auto it = std::upper_bound(steps.steps.begin(), steps.steps.end(), t, [](TimeNs v, const RankStep& s) { return v < s.start_ns; });
  if (it == steps.steps.begin()) return -1;
  --it;
  return t <= it->end_ns ? static_cast<std::int64_t>(it - steps.steps.begin()) : -1;
}

StepsView analyze_rank_steps(const RankSet& set, const RanksAnalysis& analysis) {
  StepsView out;
  double slowest_mean = -1;
  std::vector<double> means;
  std::size_t slowest_position = 0;
  for (std::size_t p = 0; p < set.ranks.size(); ++p) {
    const auto& r = set.ranks[p];
    const RankSteps& s = r.steps;
    out.ranks.push_back({r.rank, s.method, s.name, s.phase, s.wall, s.gpu_span, s.tpot_ns, s.tpot_from});
    if (s.steps.empty()) continue;
    means.push_back(s.wall.mean);
    if (s.wall.mean > slowest_mean) {
      slowest_mean = s.wall.mean;
      out.slowest_rank = r.rank;
      slowest_position = p;
    }
  }
  if (out.slowest_rank < 0) {
    out.notes.push_back({"no_steps", NoteSeverity::kInfo, "no rank's trace names steps: no per-rank step figures"});
  } else {
    const double fastest = *std::min_element(means.begin(), means.end());
    out.slowest_why = fmt::format("highest mean step wall: {:.3f} ms, the fastest rank's {:.3f} ms ({:+.1f} %)", slowest_mean / 1e6,
                                  fastest / 1e6, fastest > 0 ? 100 * (slowest_mean / fastest - 1) : 0.0);
    if (means.size() > 1 && slowest_mean <= fastest * 1.01) {
      out.slowest_why += "; the ranks' step walls agree within 1 %: a synchronous collective makes every rank wait for the slowest, so "
                         "the straggler is the rank most often last to arrive (stragglers), not the longest step";
    }
    // Step counts per rank should agree: the k-th step is the same step on every rank.
    std::map<std::size_t, std::vector<std::int64_t>> counts;
    for (const auto& r : set.ranks) counts[r.steps.steps.size()].push_back(r.rank);
    if (counts.size() > 1) {
      std::string said;
      for (const auto& [n, ranks] : counts) said += fmt::format("{}{} steps on {} rank(s)", said.empty() ? "" : ", ", n, ranks.size());
      out.notes.push_back({"step_counts_differ", NoteSeverity::kInfo,
                           "the ranks' traces hold different numbers of steps (" + said + "): the k-th steps compared may differ"});
    }
  }

  // Matched collectives by the reference rank's step and by position within the step.
  std::map<std::int64_t, std::vector<const MatchedCollective*>> by_step, by_layer;
  for (const auto& m : analysis.collectives) {
    if (m.window >= 0) by_step[m.window].push_back(&m);
    if (m.layer >= 0) by_layer[m.layer].push_back(&m);
  }
  auto most_last = [&](const std::vector<const MatchedCollective*>& list) {
    StragglerTally lasts;
    for (const auto* m : list) lasts.add(*m, analysis.noise_ns);
    return lasts.top();
  };
  if (out.slowest_rank >= 0) {
    const auto& slow = set.ranks[slowest_position].steps.steps;
    for (std::size_t k = 0; k < slow.size(); ++k) {
      SlowStepRow row;
      row.step = static_cast<std::int64_t>(k);
      row.wall_ns = slow[k].end_ns - slow[k].start_ns;
      std::vector<double> walls;
      TimeNs longest = -1;
      for (const auto& r : set.ranks) {
        if (k >= r.steps.steps.size()) continue;
        const TimeNs w = r.steps.steps[k].end_ns - r.steps.steps[k].start_ns;
        walls.push_back(static_cast<double>(w));
        if (w > longest) {
          longest = w;
          row.longest_rank = r.rank;
        }
      }
      row.min_wall_ns = static_cast<TimeNs>(*std::min_element(walls.begin(), walls.end()));
      row.max_wall_ns = static_cast<TimeNs>(*std::max_element(walls.begin(), walls.end()));
      row.median_wall_ns = static_cast<TimeNs>(median(walls));
      if (auto it = by_step.find(row.step); it != by_step.end()) {
        row.collectives = static_cast<std::int64_t>(it->second.size());
        for (const auto* m : it->second) row.max_spread_ns = std::max(row.max_spread_ns, m->spread_ns);
        std::tie(row.most_last_rank, row.most_last_times) = most_last(it->second);
      }
      out.slowest_steps.push_back(row);
    }
  }
  for (const auto& [layer, list] : by_layer) {
    LayerRow row;
    row.layer = layer;
    std::vector<double> spreads;
    for (const auto* m : list) {
      ++row.collectives;
      row.wait_ns += m->mean_wait_ns;
      row.transfer_ns += m->transfer_ns;
      spreads.push_back(static_cast<double>(m->spread_ns));
      row.max_spread_ns = std::max(row.max_spread_ns, m->spread_ns);
    }
    row.median_spread_ns = median(spreads);
    std::tie(row.top_straggler, row.top_straggler_times) = most_last(list);
    double lead = 0;
    for (const auto* m : list) {
      if (m->last_rank == row.top_straggler && m->ranks.size() >= 2 && m->lead_ns >= analysis.noise_ns) lead += static_cast<double>(m->lead_ns);
    }
    row.mean_lead_ns = row.top_straggler_times > 0 ? lead / static_cast<double>(row.top_straggler_times) : 0;
    out.layers.push_back(row);
  }
  return out;
}

}  // namespace kernscope::ranks
