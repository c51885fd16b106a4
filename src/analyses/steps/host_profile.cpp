// Host time by function per group of steps, and garbage collections per step (host_profile.hpp).
#include "analyses/steps/host_profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "analyses/steps/step_windows.hpp"
#include "analyses/trace_context.hpp"
#include "model/api_roles.hpp"
#include "model/nvtx_names.hpp"

namespace kernscope {
namespace {

constexpr std::string_view kPythonDomain = "python";
constexpr std::string_view kHookGcPrefix = "gc gen";     // kernscope's hook: "gc gen2"
constexpr std::string_view kTrtLlmGcName = "Python GC";  // TensorRT-LLM, TLLM_PROFILE_RECORD_GC=1
constexpr std::string_view kGilDomain = "GIL Trace";  // nsys -t python-gil
constexpr std::string_view kGilHolding = "Holding GIL";
constexpr std::string_view kGilWaiting = "Waiting for GIL";
// A step is slow when its wall exceeds its group's median by this factor.
constexpr double kSlowFactor = 1.5;

std::int64_t number_after(std::string_view text, std::string_view label, std::int64_t fallback) {
  // "gc gen2: 120 collected, 0 uncollectable": the number before `label`.
  const std::size_t at = text.find(label);
  if (at == std::string_view::npos || at < 2) return fallback;
  std::size_t begin = at - 1;
  while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
  std::int64_t value = fallback;
  std::from_chars(text.data() + begin, text.data() + at - 1, value);
  return value;
}

std::string label_of(const Trace& trace, StringId symbol, StringId module) {
  std::string name(trace.strings.get(symbol));
  std::string_view file = trace.strings.get(module);
  if (const std::size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  if (!file.empty() && file != name) name += " (" + std::string(file) + ")";
  return name;
}

double tenths(double value) { return std::round(value * 10.0) / 10.0; }

std::string milliseconds(std::int64_t ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f ms", static_cast<double>(ns) / 1e6);
  return buffer;
}

std::string percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f %%", share * 100.0);
  return buffer;
}

// The thread to analyse: the one that launches most GPU work; without CUDA calls, the one with
// most samples.
void choose_thread(const TraceContext& context, const HostProfileOptions& options, HostProfile& out) {
  const Trace& trace = context.trace();
  if (options.thread != 0) {
    out.global_tid = options.thread;
    for (std::int64_t g : trace.host.samples.global_tid) {
      if (g == options.thread || tid_of(g) == options.thread) {
        out.global_tid = g;
        break;
      }
    }
    out.thread_reason = "chosen with --thread";
    return;
  }
  const auto& launches = context.launch_calls_per_thread();
  if (!launches.empty()) {
    auto best = std::max_element(launches.begin(), launches.end(), [](auto& a, auto& b) { return a.second < b.second; });
    out.global_tid = best->first;
    out.thread_reason = "the thread that launches most GPU work (" + std::to_string(best->second) + " launches)";
    return;
  }
  std::map<std::int64_t, std::int64_t> samples;
  for (std::int64_t g : trace.host.samples.global_tid) ++samples[g];
  if (!samples.empty()) {
    auto best = std::max_element(samples.begin(), samples.end(), [](auto& a, auto& b) { return a.second < b.second; });
    out.global_tid = best->first;
    out.thread_reason = "no CUDA launches in the trace: the thread with most samples";
  }
}

// Function labels of each stack: the innermost one (own time) and every distinct one (total).
struct StackLabels {
  std::vector<std::uint32_t> leaf;                  // per stack; UINT32_MAX for an empty stack
  std::vector<std::vector<std::uint32_t>> all;      // per stack, distinct
  std::vector<std::string> names;                   // label id -> name
};

StackLabels label_stacks(const Trace& trace) {
  StackLabels out;
  const HostStacks& stacks = trace.host.stacks;
  std::map<std::pair<StringId, StringId>, std::uint32_t> ids;
  out.leaf.resize(stacks.size(), UINT32_MAX);
  out.all.resize(stacks.size());
  for (std::size_t s = 0; s < stacks.size(); ++s) {
    for (std::uint32_t f = stacks.first_frame[s]; f < stacks.first_frame[s + 1]; ++f) {
      auto [it, inserted] = ids.emplace(std::make_pair(stacks.symbol[f], stacks.module[f]),
                                        static_cast<std::uint32_t>(out.names.size()));
      if (inserted) out.names.push_back(label_of(trace, stacks.symbol[f], stacks.module[f]));
      if (f == stacks.first_frame[s]) out.leaf[s] = it->second;
      auto& all = out.all[s];
      if (std::find(all.begin(), all.end(), it->second) == all.end()) all.push_back(it->second);
    }
  }
  return out;
}

// nsys's GIL ranges: the host thread's waits, and every thread's holds (sorted by start).
struct GilRanges {
  std::vector<std::pair<TimeNs, TimeNs>> waits;
  std::map<std::int64_t, std::vector<std::pair<TimeNs, TimeNs>>> holds;
};

GilRanges gil_ranges(const Trace& trace, std::int64_t host_tid) {
  GilRanges out;
  const NvtxColumns& n = trace.nvtx;
  if (n.size() == 0) return out;
  NvtxDomainNames domains(trace);
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (!is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime) continue;
    const StringId domain = domains.lookup(n.global_tid[i], n.domain_id[i]);
    if (domain == kNoString || trace.strings.get(domain) != kGilDomain) continue;
    const std::string_view text = trace.strings.get(n.text[i]);
    if (text == kGilWaiting && n.global_tid[i] == host_tid) out.waits.emplace_back(n.start_ns[i], n.end_ns[i]);
    if (text == kGilHolding) out.holds[n.global_tid[i]].emplace_back(n.start_ns[i], n.end_ns[i]);
  }
  std::sort(out.waits.begin(), out.waits.end());
  for (auto& [tid, spans] : out.holds) std::sort(spans.begin(), spans.end());
  return out;
}

// Summed overlap of sorted, non-overlapping `spans` with [start, end).
std::int64_t overlap(const std::vector<std::pair<TimeNs, TimeNs>>& spans, TimeNs start, TimeNs end) {
  std::int64_t total = 0;
  auto it = std::lower_bound(spans.begin(), spans.end(), start,
                             [](const std::pair<TimeNs, TimeNs>& s, TimeNs t) { return s.second <= t; });
  for (; it != spans.end() && it->first < end; ++it) total += std::max<std::int64_t>(0, std::min(end, it->second) - std::max(start, it->first));
  return total;
}

void gil_findings(HostProfile& out) {
  for (const HostGroup& g : out.groups) {
    if (g.wall_ns <= 0 || g.gil_wait_ns * 20 < g.wall_ns) continue;  // under 5 % of the steps
    std::string text = "the host thread waits for the GIL " + milliseconds(g.gil_wait_ns / std::max<std::int64_t>(1, g.steps)) +
                       " per " + g.name + " step (" + percent(static_cast<double>(g.gil_wait_ns) / static_cast<double>(g.wall_ns)) +
                       " of it)";
    if (!g.gil_holders.empty()) {
      text += "; meanwhile the GIL is held by ";
      for (std::size_t i = 0; i < g.gil_holders.size() && i < 3; ++i) {
        const GilHolder& h = g.gil_holders[i];
        text += (i ? ", " : "") + std::string("thread ") + std::to_string(tid_of(h.global_tid)) +
                (h.name.empty() ? "" : " (" + h.name + ")") + " " + milliseconds(h.ns / std::max<std::int64_t>(1, g.steps));
      }
      text += " per step: move that work out of the serving process or release the GIL in it";
    }
    out.findings.push_back(text);
  }
}

void gc_findings(HostProfile& out) {
  const auto& steps = out.steps;
  for (const HostGroup& g : out.groups) {
    if (g.gc_count == 0 || g.steps < 3) continue;
    std::vector<std::int64_t> walls;
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].group == g.name && steps[i].phase == g.phase) {
        walls.push_back(steps[i].wall_ns);
        members.push_back(i);
      }
    }
    std::vector<std::int64_t> sorted = walls;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const std::int64_t median = sorted[sorted.size() / 2];
    // Slow steps: over kSlowFactor x the median. Collections explain them when their time inside
    // those steps (each step's counted up to its excess) is at least half of the steps' summed excess.
    std::int64_t slow = 0, slow_with_gc = 0, excess = 0, excess_gc = 0;
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (static_cast<double>(walls[k]) <= kSlowFactor * static_cast<double>(median)) continue;
      ++slow;
      excess += walls[k] - median;
      const HostStep& hs = out.host_steps[members[k]];
      if (hs.gc_count > 0) {
        ++slow_with_gc;
        excess_gc += std::min(hs.gc_ns, walls[k] - median);
      }
    }
    const std::string label = g.name + " (" + std::string(phase_name(g.phase)) + ")";
    if (slow_with_gc > 0 && excess > 0 && 2 * excess_gc >= excess) {
      out.findings.push_back("garbage collection explains the slow " + label + " steps: the " + std::to_string(slow) +
                             " steps over " + std::to_string(kSlowFactor).substr(0, 3) + "x the median (" +
                             milliseconds(median) + ") exceed it by " + milliseconds(excess) + ", " +
                             percent(static_cast<double>(excess_gc) / static_cast<double>(excess)) + " of it collections (" +
                             milliseconds(excess_gc) + ", in " + std::to_string(slow_with_gc) +
                             " of those steps). Freeze long-lived objects after start-up (gc.freeze()), raise the thresholds "
                             "(gc.set_threshold) or collect between requests (gc.disable() + gc.collect() when idle)");
    } else if (g.wall_ns > 0 && g.gc_ns * 100 >= g.wall_ns) {
      out.findings.push_back("garbage collection takes " + percent(static_cast<double>(g.gc_ns) / static_cast<double>(g.wall_ns)) +
                             " of the " + label + " steps (" + std::to_string(g.gc_count) + " collections, " +
                             milliseconds(g.gc_ns) + ")");
    }
  }
}

void host_time_findings(const Trace& trace, HostProfile& out) {
  for (const HostGroup& g : out.groups) {
    if (g.samples < 20 || g.steps == 0) continue;
    const std::int64_t per_step = g.wall_ns / g.steps;
    std::string text = g.name + " (" + std::string(phase_name(g.phase)) + ", " + std::to_string(g.steps) + " steps): " +
                       milliseconds(per_step) + " per step on the host thread";
    if (trace.has(EventKind::kKernels) && g.wall_ns > 0) {
      text += ", the GPU idle " + percent(static_cast<double>(g.gpu_idle_ns) / static_cast<double>(g.wall_ns)) + " of it";
    }
    text += "; by own time: ";
    std::size_t named = 0;
    for (const HostFunction& f : g.functions) {
      if (named == 3 || f.self_samples == 0) break;
      text += (named ? ", " : "") + milliseconds(f.self_ns_per_step) + " in " + f.name;
      ++named;
    }
    if (g.launch_api_ns > 0 || g.sync_ns > 0) {
      text += "; CUDA launch calls " + milliseconds(g.launch_api_ns / g.steps) + ", syncs " + milliseconds(g.sync_ns / g.steps) +
              " per step";
    }
    text += " (" + std::to_string(g.samples) + " samples)";
    out.findings.push_back(text);
  }
}

}  // namespace

std::vector<GcCollection> gc_collections(const Trace& trace) {
  std::vector<GcCollection> out;
  const NvtxColumns& n = trace.nvtx;
  if (n.size() == 0) return out;
  NvtxDomainNames domains(trace);
  // The hook's marks, by thread, to read the counts of the range that holds them.
  std::unordered_map<std::int64_t, std::vector<RowIndex>> marks;
  std::vector<RowIndex> ranges;
  for (RowIndex i = 0; i < n.size(); ++i) {
    const std::string_view text = trace.strings.get(n.text[i]);
    const StringId domain = domains.lookup(n.global_tid[i], n.domain_id[i]);
    const bool python = domain != kNoString && trace.strings.get(domain) == kPythonDomain;
    if (n.event_type[i] == kNvtxMark) {
      if (python && text.starts_with(kHookGcPrefix)) marks[n.global_tid[i]].push_back(i);
      continue;
    }
    if (!is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime) continue;
    if ((python && text.starts_with(kHookGcPrefix)) || (domain == kNoString && text == kTrtLlmGcName)) ranges.push_back(i);
  }
  for (RowIndex i : ranges) {
    GcCollection c;
    c.start_ns = n.start_ns[i];
    c.end_ns = n.end_ns[i];
    c.global_tid = n.global_tid[i];
    const std::string_view text = trace.strings.get(n.text[i]);
    if (text.starts_with(kHookGcPrefix)) {
      std::int32_t generation = -1;
      std::from_chars(text.data() + kHookGcPrefix.size(), text.data() + text.size(), generation);
      c.generation = generation;
      for (RowIndex m : marks[c.global_tid]) {
        if (n.start_ns[m] < c.start_ns || n.start_ns[m] > c.end_ns) continue;
        const std::string_view mark = trace.strings.get(n.text[m]);
        c.collected = number_after(mark, " collected", -1);
        c.uncollectable = number_after(mark, " uncollectable", -1);
        break;
      }
    }
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const GcCollection& a, const GcCollection& b) { return a.start_ns < b.start_ns; });
  return out;
}

// Collections overlapping [start, end): how many and for how long inside the window.
std::pair<std::int64_t, std::int64_t> gc_within(const std::vector<GcCollection>& gcs, TimeNs start, TimeNs end) {
  std::int64_t count = 0, ns = 0;
  auto it = std::lower_bound(gcs.begin(), gcs.end(), start, [](const GcCollection& c, TimeNs t) { return c.end_ns <= t; });
  // Collections are sorted by start and never overlap (one interpreter lock), so ends are sorted too.
  for (; it != gcs.end() && it->start_ns < end; ++it) {
    const std::int64_t overlap = std::min(end, it->end_ns) - std::max(start, it->start_ns);
    if (overlap > 0) {
      ++count;
      ns += overlap;
    }
  }
  return {count, ns};
}

Result<HostProfile> analyze_host(const Trace& trace, const OpRuleSet& rules, const HostProfileOptions& options) {
  // Steps; without any, host_profile_of makes the whole run one window.
  auto steps = analyze_steps(trace, rules, options.steps);
  if (!steps && !trace.has(EventKind::kKernels) && !trace.has(EventKind::kGraphExecs)) {
    // A host-only trace (a Python program that never started CUDA): steps from its annotations.
    auto windows = report::find_step_windows(trace, options.steps);
    if (!windows && options.steps.step_range) return std::unexpected(windows.error());
    if (windows && windows->source != report::StepSource::kGpuGaps) {
      StepAnalysis annotated;
      annotated.method = windows->method;
      for (const auto& w : windows->windows) {
        Step step;
        step.name = w.name;
        step.group = step_group_name(w.name);
        step.phase = w.phase;
        step.start_ns = w.start;
        step.end_ns = w.end;
        step.wall_ns = w.end - w.start;
        annotated.steps.push_back(std::move(step));
      }
      steps = std::move(annotated);
    }
  } else if (!steps && options.steps.step_range) {
    return std::unexpected(steps.error());
  }
  HostProfile out = steps ? host_profile_of(trace, steps->steps, steps->method, options) : host_profile_of(trace, {}, "", options);
  const bool traced_ranges = std::any_of(out.groups.begin(), out.groups.end(), [](const HostGroup& g) { return !g.functions.empty(); });
  if (trace.host.samples.size() == 0 && out.collections.empty() && !out.gil_traced && !traced_ranges) {
    // Not an error: the steps' launch and sync time still stand, and other traces of a set may have it.
    out.notes.insert(out.notes.begin(),
                     Note{"no_host_data", NoteSeverity::kInfo,
                          "this trace has no sampled host stacks, garbage-collection ranges or GIL ranges (record with "
                          "`kernscope record --sample cpu`, or nsys --sample=cpu --python-sampling=true -t python-gil; "
                          "collections need kernscope's Python hook or TLLM_PROFILE_RECORD_GC=1)"});
  }
  return out;
}

namespace {

// Without samples, the host's functions from the ranges the trace times exactly: the PyTorch
// profiler's python_function events (with_stack=True), else its cpu_op events (aten operators), of
// the host thread. Own time is a range's time less its children's on that thread; each range counts
// in the step its start falls in.
void traced_functions(const Trace& trace, HostProfile& out) {
  const auto& n = trace.nvtx;
  std::int64_t domain = 0;
  for (const std::int64_t d : {kKinetoPythonDomain, kKinetoCpuOpDomain}) {
    for (RowIndex i = 0; i < n.size() && domain == 0; ++i) {
      if (n.domain_id[i] == d && n.global_tid[i] == out.global_tid && is_nvtx_range(n.event_type[i]) && n.end_ns[i] != kNoTime) domain = d;
    }
    if (domain != 0) break;
  }
  if (domain == 0 || out.steps.empty()) return;
  struct Range {
    TimeNs start, end;
    StringId name;
  };
  std::vector<Range> ranges;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (n.domain_id[i] != domain || n.global_tid[i] != out.global_tid || !is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime ||
        n.end_ns[i] < n.start_ns[i]) {
      continue;
    }
    // A profiler step is the step itself, not a function.
    if (domain == kKinetoCpuOpDomain && trace.strings.get(n.text[i]).starts_with("ProfilerStep#")) continue;
    ranges.push_back({n.start_ns[i], n.end_ns[i], n.text[i]});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
  // Own time: each range's time less its direct children's (a stack of open ranges).
  std::vector<std::int64_t> own(ranges.size());
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    while (!open.empty() && ranges[open.back()].end <= ranges[i].start) open.pop_back();
    own[i] = ranges[i].end - ranges[i].start;
    if (!open.empty()) {
      own[open.back()] -= std::min(ranges[i].end, ranges[open.back()].end) - ranges[i].start;
    }
    open.push_back(i);
  }
  // Per step (by start), then per group: own and total time by name; a name open twice in one
  // stack (recursion) counts its total once, from the outermost.
  std::vector<std::size_t> order(out.steps.size());
  for (std::size_t s = 0; s < order.size(); ++s) order[s] = s;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return out.steps[a].start_ns < out.steps[b].start_ns; });
  std::map<std::pair<std::string, Phase>, std::size_t> group_of;
  for (std::size_t g = 0; g < out.groups.size(); ++g) group_of[{out.groups[g].name, out.groups[g].phase}] = g;
  std::vector<std::map<StringId, std::pair<std::int64_t, std::int64_t>>> by_group(out.groups.size());  // own, total
  std::vector<std::map<StringId, std::int64_t>> by_step(out.steps.size());
  open.clear();
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    while (!open.empty() && ranges[open.back()].end <= ranges[i].start) open.pop_back();
    auto it = std::upper_bound(order.begin(), order.end(), ranges[i].start,
                               [&](TimeNs t, std::size_t s) { return t < out.steps[s].start_ns; });
    open.push_back(i);
    if (it == order.begin()) continue;
    const std::size_t s = *(it - 1);
    if (ranges[i].start >= out.steps[s].end_ns) continue;
    const auto g = group_of.find({out.steps[s].group, out.steps[s].phase});
    if (g == group_of.end()) continue;
    auto& [own_ns, total_ns] = by_group[g->second][ranges[i].name];
    own_ns += own[i];
    bool outermost = true;
    for (std::size_t k = 0; k + 1 < open.size(); ++k) outermost = outermost && ranges[open[k]].name != ranges[i].name;
    if (outermost) total_ns += ranges[i].end - ranges[i].start;
    by_step[s][ranges[i].name] += own[i];
  }
  // "<built-in method to of Tensor object at 0x7d67...>": one function, whatever object it ran on.
  auto label = [&](StringId id) {
    std::string name(trace.strings.get(id));
    if (const auto at = name.find(" at 0x"); at != std::string::npos) {
      const auto end = name.find('>', at);
      name.erase(at, end == std::string::npos ? std::string::npos : end - at);
    }
    return name;
  };
  for (HostStep& hs : out.host_steps) {
    const auto& m = by_step[hs.step];
    auto top = std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != m.end()) hs.top_function = label(top->first);
  }
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    HostGroup& group = out.groups[g];
    if (!group.functions.empty() || by_group[g].empty()) continue;
    const std::int64_t steps = std::max<std::int64_t>(1, group.steps);
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& [name, times] : by_group[g]) {
      auto& m = merged[label(name)];
      m.first += times.first;
      m.second += times.second;
    }
    for (const auto& [name, times] : merged) {
      HostFunction f;
      f.name = name;
      f.self_ns_per_step = times.first / steps;
      f.total_ns_per_step = times.second / steps;
      group.functions.push_back(std::move(f));
    }
    std::sort(group.functions.begin(), group.functions.end(), [](const HostFunction& a, const HostFunction& b) {
      if (a.self_ns_per_step != b.self_ns_per_step) return a.self_ns_per_step > b.self_ns_per_step;
      if (a.total_ns_per_step != b.total_ns_per_step) return a.total_ns_per_step > b.total_ns_per_step;
      return a.name < b.name;
    });
  }
  out.notes.push_back({"host_functions_from_ranges", NoteSeverity::kInfo,
                       std::string("host functions from the trace's ") +
                           (domain == kKinetoPythonDomain ? "Python function ranges (the PyTorch profiler's python_function events)"
                                                          : "operator ranges (the PyTorch profiler's cpu_op events: aten operators)") +
                           ": exact times of each call on the host thread, not samples; own time = a range's less its children's"});
}

}  // namespace

HostProfile host_profile_of(const Trace& trace, std::vector<Step> steps, const std::string& step_method,
                            const HostProfileOptions& options) {
  // Only the launching-call lookup of the context is used: the built-in rules fill the rules' place.
  const TraceContext context(trace, OpRuleSet::builtin());
  return host_profile_of(context, std::move(steps), step_method, options);
}

HostProfile host_profile_of(const TraceContext& context, std::vector<Step> steps, const std::string& step_method,
                            const HostProfileOptions& options) {
  const Trace& trace = context.trace();
  HostProfile out;
  out.collections = gc_collections(trace);
  const HostSampleColumns& samples = trace.host.samples;
  choose_thread(context, options, out);
  const GilRanges gil = gil_ranges(trace, out.global_tid);
  out.gil_traced = !gil.holds.empty() || !gil.waits.empty();
  for (const Thread& t : trace.threads) {
    if (t.global_tid == out.global_tid) out.thread_name = t.name;
  }
  if (!steps.empty()) {
    out.steps = std::move(steps);
    out.step_method = step_method;
  } else {
    Step whole;
    whole.name = "whole run";
    whole.group = whole.name;
    whole.start_ns = std::numeric_limits<TimeNs>::max();
    whole.end_ns = std::numeric_limits<TimeNs>::min();
    if (samples.size()) {
      whole.start_ns = samples.time_ns.front();
      whole.end_ns = samples.time_ns.back() + 1;
    }
    for (const auto& [a, b] : gil.waits) {
      whole.start_ns = std::min(whole.start_ns, a);
      whole.end_ns = std::max(whole.end_ns, b);
    }
    for (const auto& [tid, spans] : gil.holds) {
      for (const auto& [a, b] : spans) {
        whole.start_ns = std::min(whole.start_ns, a);
        whole.end_ns = std::max(whole.end_ns, b);
      }
    }
    for (const auto& c : out.collections) {
      whole.start_ns = std::min(whole.start_ns, c.start_ns);
      whole.end_ns = std::max(whole.end_ns, c.end_ns);
    }
    if (whole.start_ns < whole.end_ns) {
      whole.wall_ns = whole.end_ns - whole.start_ns;
      out.steps.push_back(whole);
      out.notes.push_back({"no_steps", NoteSeverity::kInfo, "no steps found: the whole run is one window"});
    }
  }

  const StackLabels labels = label_stacks(trace);
  std::vector<std::size_t> thread_samples;  // indices of the host thread's samples, in time order
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples.global_tid[i] == out.global_tid) thread_samples.push_back(i);
  }
  out.samples_total = static_cast<std::int64_t>(thread_samples.size());
  // What each sample stands for (see host_profile.hpp).
  std::vector<std::int64_t> gaps;
  for (std::size_t k = 1; k < thread_samples.size(); ++k) {
    gaps.push_back(samples.time_ns[thread_samples[k]] - samples.time_ns[thread_samples[k - 1]]);
  }
  std::int64_t period = 0;
  if (!gaps.empty()) {
    std::vector<std::int64_t> sorted = gaps;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    period = sorted[sorted.size() / 2];
  }
  std::vector<std::int64_t> weight(thread_samples.size(), period);
  if (trace.host.wall_clock) {
    for (std::size_t k = 1; k < thread_samples.size(); ++k) weight[k] = gaps[k - 1];
    out.notes.push_back({"wall_clock_samples", NoteSeverity::kInfo, "samples are wall clock: each stands for the time since the thread's previous one"});
  } else if (!thread_samples.empty()) {
    out.notes.push_back({"cpu_samples", NoteSeverity::kInfo,
                         "samples are CPU samples (taken while the thread runs): each stands for the sampling period, " +
                             std::to_string(period / 1000) + " us; time the thread spends blocked is not seen"});
  }

  std::vector<std::map<std::int64_t, std::int64_t>> holders;  // per group: thread -> ns held during waits

  // Per step, then per group (name and phase, in order of first appearance).
  std::map<std::pair<std::string, Phase>, std::size_t> group_of;
  struct Weight {
    std::int64_t samples = 0, ns = 0;
  };
  std::vector<std::unordered_map<std::uint32_t, Weight>> self_counts, total_counts;
  for (std::size_t s = 0; s < out.steps.size(); ++s) {
    const Step& step = out.steps[s];
    auto [it, inserted] = group_of.emplace(std::make_pair(step.group, step.phase), out.groups.size());
    if (inserted) {
      HostGroup g;
      g.name = step.group;
      g.phase = step.phase;
      out.groups.push_back(std::move(g));
      self_counts.emplace_back();
      total_counts.emplace_back();
      holders.emplace_back();
    }
    HostGroup& g = out.groups[it->second];
    HostStep hs;
    hs.step = s;
    std::tie(hs.gc_count, hs.gc_ns) = gc_within(out.collections, step.start_ns, step.end_ns);
    if (out.gil_traced) {
      hs.gil_wait_ns = overlap(gil.waits, step.start_ns, step.end_ns);
      auto w = std::lower_bound(gil.waits.begin(), gil.waits.end(), step.start_ns,
                                [](const std::pair<TimeNs, TimeNs>& x, TimeNs t) { return x.second <= t; });
      for (; w != gil.waits.end() && w->first < step.end_ns; ++w) {
        const TimeNs a = std::max(step.start_ns, w->first), b = std::min(step.end_ns, w->second);
        for (const auto& [tid, spans] : gil.holds) {
          if (tid == out.global_tid) continue;
          if (const std::int64_t held = overlap(spans, a, b); held > 0) holders[it->second][tid] += held;
        }
      }
    }
    auto first = std::lower_bound(thread_samples.begin(), thread_samples.end(), step.start_ns,
                                  [&](std::size_t i, TimeNs t) { return samples.time_ns[i] < t; });
    std::unordered_map<std::uint32_t, std::int64_t> step_self;
    for (auto k = first; k != thread_samples.end() && samples.time_ns[*k] < step.end_ns; ++k) {
      const std::uint32_t stack = samples.stack[*k];
      const std::int64_t ns = weight[static_cast<std::size_t>(k - thread_samples.begin())];
      ++hs.samples;
      g.sample_stacks.push_back(stack);
      g.sample_ns.push_back(ns);
      if (labels.leaf[stack] != UINT32_MAX) {
        step_self[labels.leaf[stack]] += ns;
        auto& w = self_counts[it->second][labels.leaf[stack]];
        ++w.samples;
        w.ns += ns;
      }
      for (std::uint32_t label : labels.all[stack]) {
        auto& w = total_counts[it->second][label];
        ++w.samples;
        w.ns += ns;
      }
    }
    if (!step_self.empty()) {
      auto top = std::max_element(step_self.begin(), step_self.end(), [](auto& a, auto& b) {
        return a.second != b.second ? a.second < b.second : a.first > b.first;
      });
      hs.top_function = labels.names[top->first];
    }
    ++g.steps;
    g.wall_ns += step.wall_ns;
    g.gpu_idle_ns += step.gpu_idle_ns;
    g.launch_api_ns += step.launch_api_ns;
    g.sync_ns += step.sync_ns;
    g.samples += hs.samples;
    g.gc_count += hs.gc_count;
    g.gc_ns += hs.gc_ns;
    g.gil_wait_ns += hs.gil_wait_ns;
    out.host_steps.push_back(std::move(hs));
  }
  std::map<std::int64_t, std::string> thread_names;
  for (const Thread& t : trace.threads) thread_names[t.global_tid] = t.name;
  for (std::size_t gi = 0; gi < out.groups.size(); ++gi) {
    HostGroup& g = out.groups[gi];
    for (const auto& [tid, ns] : holders[gi]) g.gil_holders.push_back({tid, thread_names[tid], ns});
    std::sort(g.gil_holders.begin(), g.gil_holders.end(), [](const GilHolder& a, const GilHolder& b) {
      return a.ns != b.ns ? a.ns > b.ns : a.global_tid < b.global_tid;
    });
    if (g.samples == 0) continue;
    for (const auto& [label, total] : total_counts[gi]) {
      HostFunction f;
      f.name = labels.names[label];
      f.total_samples = total.samples;
      f.total_ns_per_step = total.ns / g.steps;
      if (auto self = self_counts[gi].find(label); self != self_counts[gi].end()) {
        f.self_samples = self->second.samples;
        f.self_ns_per_step = self->second.ns / g.steps;
      }
      g.functions.push_back(std::move(f));
    }
    std::sort(g.functions.begin(), g.functions.end(), [](const HostFunction& a, const HostFunction& b) {
      if (a.self_ns_per_step != b.self_ns_per_step) return a.self_ns_per_step > b.self_ns_per_step;
      if (a.total_ns_per_step != b.total_ns_per_step) return a.total_ns_per_step > b.total_ns_per_step;
      return a.name < b.name;
    });
  }

  if (out.samples_total == 0) traced_functions(trace, out);
  gc_findings(out);
  gil_findings(out);
  host_time_findings(trace, out);
  if (!out.gil_traced && trace.host.info.empty()) {
    out.notes.push_back({"gil_not_traced", NoteSeverity::kInfo, "GIL waits: not in this trace (nsys records them with -t python-gil)"});
  }
  if (samples.size() > 0 && out.samples_total == 0) {
    out.notes.push_back({"thread_without_samples", NoteSeverity::kInfo,
                         "the host thread analysed (" + std::to_string(tid_of(out.global_tid)) +
                             ") has no samples: it never ran Python or native code the sampler saw (use --thread)"});
  }
  // kernscope's native sampler (KERNSCOPE_HOST_INFO sampler = "native ...") holds no interpreter
  // lock: its cost is CPU time, its thread's and its signal handlers' on the program's threads.
  bool native_sampler = false;
  for (const auto& [name, value] : trace.host.info) native_sampler = native_sampler || (name == "sampler" && value.starts_with("native"));
  for (const auto& [name, value] : trace.host.info) {
    if (name == "sampler_hz_asked") out.notes.push_back({"sampler_rate_asked", NoteSeverity::kInfo, "sampler: asked " + value + " Hz"});
    if (name == "sampler_hz_achieved") out.notes.push_back({"sampler_rate_achieved", NoteSeverity::kInfo, "sampler: achieved " + value + " Hz"});
    if (name == "native_frames") out.notes.push_back({"native_frames", NoteSeverity::kInfo, "host stacks: " + value});
    if (name == "gil_wait") out.notes.push_back({"gil_waits", NoteSeverity::kInfo, "GIL waits " + value});
    if (name == "sampler_busy_share" && native_sampler) {
      out.notes.push_back({"sampler_cost", NoteSeverity::kInfo,
                           "sampler cost: its thread and its signal handlers used " + value.substr(0, 7) +
                               " of one CPU over the run (the handlers' part on the program's own threads)"});
    } else if (name == "sampler_busy_share") {
      out.notes.push_back({"sampler_cost", NoteSeverity::kInfo,
                           "sampler cost: it held the interpreter lock " + value.substr(0, 7) +
                               " of the run (the traced program's threads waited that long at most)"});
    }
  }
  return out;
}

Table host_groups_table(const HostProfile& profile) {
  Table t;
  t.report = "host_groups";
  t.title = "Host Time per Group of Steps";
  t.columns = {{"Group"}, {"Phase"}, {"Steps"}, {"Wall per Step", Unit::kDuration}, {"GPU Idle", Unit::kPercent},
               {"Launch API per Step", Unit::kDuration}, {"Sync per Step", Unit::kDuration}, {"GC per Step", Unit::kDuration},
               {"Collections"}, {"GIL Wait per Step", Unit::kDuration}, {"Top GIL Holder"}, {"Samples"}};
  for (const HostGroup& g : profile.groups) {
    const std::int64_t n = std::max<std::int64_t>(1, g.steps);
    std::string holder;
    if (!g.gil_holders.empty()) {
      holder = std::to_string(tid_of(g.gil_holders.front().global_tid));
      if (!g.gil_holders.front().name.empty()) holder += " (" + g.gil_holders.front().name + ")";
    }
    t.rows.push_back({g.name, std::string(phase_name(g.phase)), g.steps, g.wall_ns / n,
                      g.wall_ns > 0 ? tenths(100.0 * static_cast<double>(g.gpu_idle_ns) / static_cast<double>(g.wall_ns)) : 0.0,
                      g.launch_api_ns / n, g.sync_ns / n, g.gc_ns / n, g.gc_count,
                      profile.gil_traced ? Cell(g.gil_wait_ns / n) : Cell(), holder, g.samples});
  }
  return t;
}

Table host_functions_table(const HostProfile& profile, std::size_t limit) {
  Table t;
  t.report = "host_functions";
  t.title = "Host Time by Function (own and total, per step)";
  t.columns = {{"Group"}, {"Function"}, {"Own per Step", Unit::kDuration}, {"Own", Unit::kPercent},
               {"Total per Step", Unit::kDuration}, {"Total", Unit::kPercent}, {"Own Samples"}, {"Samples"}};
  for (const HostGroup& g : profile.groups) {
    std::size_t shown = 0;
    std::int64_t sampled = 0;  // the group's sampled time per step
    for (const HostFunction& f : g.functions) sampled += f.self_ns_per_step;
    const double n = static_cast<double>(std::max<std::int64_t>(1, sampled));
    for (const HostFunction& f : g.functions) {
      if (limit != 0 && shown++ == limit) break;
      t.rows.push_back({g.name, f.name, f.self_ns_per_step, tenths(100.0 * static_cast<double>(f.self_ns_per_step) / n),
                        f.total_ns_per_step, tenths(100.0 * static_cast<double>(f.total_ns_per_step) / n), f.self_samples,
                        f.total_samples});
    }
  }
  return t;
}

Table host_steps_table(const HostProfile& profile) {
  Table t;
  t.report = "host_steps";
  t.title = "Host Side per Step";
  t.columns = {{"Step"}, {"Name"}, {"Phase"}, {"Start", Unit::kTimestamp}, {"Wall", Unit::kDuration},
               {"Launch API", Unit::kDuration}, {"Sync", Unit::kDuration}, {"Collections"}, {"GC", Unit::kDuration},
               {"GIL Wait", Unit::kDuration}, {"Samples"}, {"Top Function (own)"}};
  for (const HostStep& hs : profile.host_steps) {
    const Step& s = profile.steps[hs.step];
    t.rows.push_back({static_cast<std::int64_t>(hs.step), s.name, std::string(phase_name(s.phase)), s.start_ns, s.wall_ns,
                      s.launch_api_ns, s.sync_ns, hs.gc_count, hs.gc_ns,
                      profile.gil_traced ? Cell(hs.gil_wait_ns) : Cell(), hs.samples, hs.top_function});
  }
  return t;
}

}  // namespace kernscope
