#include "analyses/steps/step_windows.hpp"

#include "analyses/steps/forward_passes.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "analyses/trace_context.hpp"
#include "base/text_util.hpp"
#include "model/step_names.hpp"
#include "analyses/tail.hpp"
#include "base/text_pattern.hpp"

namespace kernscope::report {
namespace {

// "ProfilerStep#12" (any domain prefix): the range torch.profiler.profile.step() opens.
bool is_profiler_step(std::string_view name) {
  static const auto kProfilerStep = TextPattern::literal(R"((^|:)ProfilerStep#\d+$)");
  return kProfilerStep.search(name);
}

struct Occurrences {
  std::vector<std::size_t> positions;  // in launch order of the process's kernels
};

}  // namespace

std::optional<StepAnnotation> step_annotation(std::string_view text) {
  const auto phase = step_name_phase(text);
  if (!phase) return std::nullopt;
  return StepAnnotation{*phase};
}

namespace {

std::vector<StepWindow> innermost(std::vector<StepWindow> chosen) {
  // Drop a window that encloses another of its thread: per thread, sorted by start (longer
  // first), a window encloses the next ones that start before it ends.
  std::sort(chosen.begin(), chosen.end(), [](const StepWindow& a, const StepWindow& b) {
    return std::tie(a.global_tid, a.start, b.end) < std::tie(b.global_tid, b.start, a.end);
  });
  std::vector<bool> outer(chosen.size(), false);
  for (std::size_t i = 0; i + 1 < chosen.size(); ++i) {
    const auto& a = chosen[i];
    const auto& b = chosen[i + 1];
    if (a.global_tid == b.global_tid && b.start < a.end && b.end <= a.end && (a.start != b.start || a.end != b.end)) {
      outer[i] = true;
    }
  }
  std::vector<StepWindow> out;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!outer[i]) out.push_back(std::move(chosen[i]));
  }
  std::sort(out.begin(), out.end(), [](const StepWindow& a, const StepWindow& b) { return a.start < b.start; });
  return out;
}

std::optional<StepWindows> from_annotations(const Trace& trace, const std::vector<IndexedRange>& ranges,
                                            const StepOptions& options) {
  std::vector<StepWindow> chosen, engine_functions;
  std::unordered_map<std::string, std::optional<StepAnnotation>> seen;  // by range name
  for (const auto& r : ranges) {
    // PyTorch's operator ranges and their GPU-side copies are not steps, except the range
    // torch.profiler's step() opens ("ProfilerStep#N"), which 2021 Kineto traces file as an
    // operator ("Operator" category) rather than a user annotation. Python functions are steps only
    // where an engine's step function is all the trace has (step_names.hpp).
    const std::int64_t domain_id = trace.nvtx.domain_id[r.row];
    if (domain_id == kKinetoPythonDomain && !options.step_range) {
      const std::string text = r.name.substr(r.name.find(':') + 1);
      if (auto phase = engine_step_function_phase(text)) engine_functions.push_back({r.name, r.start_ns, r.end_ns, r.global_tid, *phase});
      continue;
    }
    if (is_kineto_op_domain(domain_id) && !(domain_id == kKinetoCpuOpDomain && is_profiler_step(r.name))) continue;
    const auto colon = r.name.find(':');
    const std::string domain = r.name.substr(0, colon);
    const std::string text = r.name.substr(colon + 1);
    if (options.step_range) {
      const std::string label = domain.empty() ? text : text + "@" + domain;
      if (label == *options.step_range || text == *options.step_range) {
        chosen.push_back({r.name, r.start_ns, r.end_ns, r.global_tid, phase_from_name(text)});
      }
      continue;
    }
    auto it = seen.find(r.name);
    if (it == seen.end()) it = seen.emplace(r.name, step_annotation(text)).first;
    if (it->second) chosen.push_back({r.name, r.start_ns, r.end_ns, r.global_tid, it->second->phase});
  }
  if (chosen.empty() && !engine_functions.empty()) {
    StepWindows out;
    out.windows = innermost(std::move(engine_functions));
    out.source = StepSource::kAnnotations;
    out.method = "the Python function an engine runs once per step ('" + out.windows.front().name.substr(out.windows.front().name.find(':') + 1) +
                 "'; no step annotations)";
    return out;
  }
  if (chosen.empty()) return std::nullopt;
  StepWindows out;
  out.windows = innermost(std::move(chosen));
  out.source = options.step_range ? StepSource::kStepRange : StepSource::kAnnotations;
  out.method = options.step_range ? "NVTX ranges named '" + *options.step_range + "'"
                                  : "annotations that name steps (e.g. prefill, decode_step, ProfilerStep#N, execute_model)";
  return out;
}

// The kernel launched once per forward pass: among kernels of the busiest process in launch order,
// the name whose occurrences come at the most regular spacing (the same number of kernels apart
// for at least half of them), the widest such spacing; of names equally spaced, the one that comes
// first in the sequence (the start of the pass).
std::optional<StepWindows> from_kernel_period(const TraceContext& context, const BusiestProcess& busiest) {
  const Trace& trace = context.trace();
  const auto& k = trace.kernels;
  if (k.size() < 16) return std::nullopt;
  const std::int64_t pid = busiest.global_pid;
  const std::vector<RowIndex>& order = busiest.order;
  std::unordered_map<StringId, Occurrences> by_name;
  for (std::size_t p = 0; p < order.size(); ++p) by_name[k.demangled_name[order[p]]].positions.push_back(p);

  struct Candidate {
    StringId name;
    std::size_t spacing, count, first;
  };
  std::optional<Candidate> best;
  for (const auto& [name, occ] : by_name) {
    const auto& pos = occ.positions;
    if (pos.size() < 4) continue;
    std::map<std::size_t, std::size_t> spacings;
    for (std::size_t j = 1; j < pos.size(); ++j) ++spacings[pos[j] - pos[j - 1]];
    const auto mode = std::max_element(spacings.begin(), spacings.end(), [](auto& a, auto& b) { return a.second < b.second; });
    if (mode->first < 2 || 2 * mode->second < pos.size() - 1) continue;
    const Candidate c{name, mode->first, pos.size(), pos.front()};
    if (!best || c.spacing > best->spacing || (c.spacing == best->spacing && c.first < best->first)) best = c;
  }
  if (!best) return std::nullopt;
  std::vector<std::size_t> anchors = by_name[best->name].positions;
  // Host windows on the launching thread when the launches are traced, else GPU-time windows.
  const ApiLookup& lookup = context.api_lookup();
  std::vector<std::pair<TimeNs, std::int64_t>> starts;  // (time, thread)
  for (std::size_t p : anchors) {
    const RowIndex i = order[p];
    if (auto r = lookup.find(k.global_pid[i], k.correlation_id[i])) {
      starts.push_back({trace.api_calls.start_ns[*r], trace.api_calls.global_tid[*r]});
    } else {
      starts.push_back({k.start_ns[i], 0});
    }
  }
  // An anchor whose launch is not in the trace while later ones are was launched before the
  // capture began (or before a time filter's start): its step started outside the trace, so it
  // is partial and left out rather than reported short.
  // Only when most anchors were launched inside the trace (else GPU-time windows serve better).
  std::size_t launched_before = 0;
  while (launched_before < starts.size() && starts[launched_before].second == 0) ++launched_before;
  const std::size_t launched_inside = starts.size() - launched_before;
  TimeNs partial_gpu_start = 0;
  if (launched_before > 0 && launched_inside > launched_before && launched_inside >= 3) {
    partial_gpu_start = k.start_ns[order[anchors.front()]];
    starts.erase(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(launched_before));
    anchors.erase(anchors.begin(), anchors.begin() + static_cast<std::ptrdiff_t>(launched_before));
  } else {
    launched_before = 0;
  }
  const bool host = std::all_of(starts.begin(), starts.end(), [&](auto& s) { return s.second != 0 && s.second == starts[0].second; });
  if (!host) {
    for (std::size_t j = 0; j < anchors.size(); ++j) starts[j] = {k.start_ns[order[anchors[j]]], 0};
  }
  std::vector<std::int64_t> lengths;
  for (std::size_t j = 1; j < starts.size(); ++j) lengths.push_back(starts[j].first - starts[j - 1].first);
  std::sort(lengths.begin(), lengths.end());
  const auto median = static_cast<std::int64_t>(percentile_linear(lengths, 50));
  // The last step ends where its work ends: the last launch (host) or kernel (GPU) of its run
  // that comes within two median steps of its start (later work is not the loop's).
  TimeNs last_end = starts.back().first;
  for (std::size_t p = anchors.back(); p < order.size(); ++p) {
    const RowIndex i = order[p];
    TimeNs t = k.end_ns[i];
    if (host) {
      auto r = lookup.find(k.global_pid[i], k.correlation_id[i]);
      if (!r) continue;
      t = trace.api_calls.end_ns[*r];
    }
    if (t <= starts.back().first + 2 * median) last_end = std::max(last_end, t);
  }
  // The last pass may be cut by the end of the trace (or of a filter). From its anchor on it
  // lacks only the few kernels a pass launches before its anchor (the anchor is the earliest of
  // the equally spaced names), so fewer than half the kernels of the shortest full pass in the
  // trace is a pass that did not finish inside it: left out rather than reported as a short step.
  std::size_t shortest_pass = order.size();
  for (std::size_t j = 1; j < anchors.size(); ++j) shortest_pass = std::min(shortest_pass, anchors[j] - anchors[j - 1]);
  const std::size_t last_pass = order.size() - anchors.back();
  const bool last_cut = 2 * last_pass < shortest_pass && starts.size() > 3;
  if (last_cut) {
    last_end = starts.back().first;
    starts.pop_back();
    anchors.pop_back();
  }
  StepWindows out;
  const std::string name = "period-step";  // not "forward": the name is kernscope's, not the trace's
  for (std::size_t j = 0; j < starts.size(); ++j) {
    const TimeNs end = j + 1 < starts.size() ? starts[j + 1].first : last_end;
    out.windows.push_back({name, starts[j].first, end, starts[j].second, Phase::kUnknown, process_key(pid)});
  }
  out.source = StepSource::kKernelPeriod;
  out.partial_gpu_start = partial_gpu_start;
  std::string anchor(trace.strings.get(best->name));
  if (anchor.size() > 60) anchor = anchor.substr(0, 59) + "\xE2\x80\xA6";
  out.method = "no step annotations: the period of the work, a step starting at each launch of " + anchor + " (" +
               std::to_string(best->count) + " launches, most " + std::to_string(best->spacing) +
               " kernels apart)";
  if (busiest.processes > 1) {
    out.method += "; steps of the busiest process (" + std::to_string(pid_of(pid)) + ", " +
                  std::to_string(order.size()) + " of " + std::to_string(k.size()) + " kernels)";
  }
  if (last_cut) {
    out.method += "; the last step left out: the trace ends before its pass does (" + std::to_string(last_pass) +
                  " kernels from its anchor on, under half of the shortest full pass's " + std::to_string(shortest_pass) + ")";
  }
  if (launched_before > 0) {
    out.method += "; " + std::to_string(launched_before) +
                  " earlier step(s) left out: launched before the trace starts, so only partly in it";
  }
  return out;
}

// A unit the kernel period found is a step only where a step's own work is in it. An inference
// step embeds its tokens and ends by sampling the next ones (kernels of the classes embedding and
// sampling, data/op_rules.tsv): where the process holds such kernels, fewer of them than units, and
// most units hold none, the unit repeats inside a step (a layer: a one-step prefill of 36 layers
// without its step annotation read as 36 steps), and is said to be one. Returns the words that say
// so and the number of those kernels, or nullopt when the units are steps.
struct InsideSteps {
  std::string words;
  std::size_t markers = 0;
};
std::optional<InsideSteps> unit_inside_steps(const TraceContext& context, const StepWindows& units) {
  if (units.windows.size() < 3) return std::nullopt;
  const Trace& trace = context.trace();
  const auto& k = trace.kernels;
  const std::int64_t process = units.windows.front().global_pid;
  const bool host = units.windows.front().global_tid != 0;
  const ApiLookup& lookup = context.api_lookup();
  std::vector<TimeNs> markers;  // on the units' clock: launch (host windows) or GPU start
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (process != 0 && process_key(k.global_pid[i]) != process) continue;
    const auto& op_class = context.kernel_class(k.demangled_name[i]).op_class;
    if (op_class != "sampling" && op_class != "embedding") continue;
    if (!host) {
      markers.push_back(k.start_ns[i]);
    } else if (auto r = lookup.find(k.global_pid[i], k.correlation_id[i])) {
      markers.push_back(trace.api_calls.start_ns[*r]);
    }
  }
  const std::size_t units_count = units.windows.size();
  if (markers.empty() || markers.size() >= units_count) return std::nullopt;
  std::sort(markers.begin(), markers.end());
  std::size_t holding = 0;
  for (const auto& w : units.windows) {
    const auto first = std::lower_bound(markers.begin(), markers.end(), w.start);
    if (first != markers.end() && *first < w.end) ++holding;
  }
  if (2 * holding >= units_count) return std::nullopt;
  std::vector<std::int64_t> lengths;
  for (const auto& w : units.windows) lengths.push_back(w.end - w.start);
  std::sort(lengths.begin(), lengths.end());
  char median[32];
  std::snprintf(median, sizeof median, "%.3f ms", percentile_linear(lengths, 50) / 1e6);
  const auto launch_of = units.method.find("each launch of ");
  const std::string unit = launch_of == std::string::npos ? units.method : units.method.substr(launch_of + 15);
  return InsideSteps{"the work repeats at each launch of " + unit + ": " + std::to_string(units_count) + " units, median " +
                         median + ", of which " + std::to_string(holding) + " hold a sampling or embedding kernel (" +
                         std::to_string(markers.size()) +
                         " in the trace), which every inference step has: the unit is a part of a step (e.g. a layer), not a step",
                     markers.size()};
}

// The steps around units that repeat inside them: the innermost ranges of the units' thread (user
// annotations, NVTX, Python functions; not operators) that each hold two or more whole units.
std::optional<StepWindows> ranges_holding_units(const Trace& trace, const std::vector<IndexedRange>& ranges,
                                                const StepWindows& units) {
  const std::int64_t thread = units.windows.front().global_tid;
  if (thread == 0) return std::nullopt;  // GPU-time units: no host range to compare them with
  // The units follow one another (each ends where the next starts), so the units inside a range are
  // one run: those starting at or after its start, up to the last one ending by its end.
  const auto& w = units.windows;
  std::vector<StepWindow> chosen;
  for (const auto& r : ranges) {
    const std::int64_t domain_id = trace.nvtx.domain_id[r.row];
    if (r.global_tid != thread || domain_id == kKinetoCpuOpDomain || domain_id == kKinetoGpuAnnotationDomain) continue;
    const auto first = std::lower_bound(w.begin(), w.end(), r.start_ns, [](const StepWindow& u, TimeNs t) { return u.start < t; });
    const auto past = std::upper_bound(first, w.end(), r.end_ns, [](TimeNs t, const StepWindow& u) { return t < u.end; });
    if (past - first < 2) continue;
    const std::string text = r.name.substr(r.name.find(':') + 1);
    chosen.push_back({r.name, r.start_ns, r.end_ns, r.global_tid, phase_from_name(text), units.windows.front().global_pid});
  }
  if (chosen.empty()) return std::nullopt;
  StepWindows out;
  out.windows = innermost(std::move(chosen));
  out.source = StepSource::kAnnotations;
  std::string names;
  for (const auto& w : out.windows) {
    if (names.find("'" + w.name + "'") == std::string::npos && names.size() < 200) names += (names.empty() ? "'" : ", '") + w.name + "'";
  }
  out.method = "the ranges that hold the repeating unit (" + names + ")";
  return out;
}

// A training step ends with its optimizer step. Where the trace shows training (backward kernels,
// or autograd's annotations: backward functions, emit_nvtx sequence numbers) but the busiest process
// ran no optimizer kernel (class optimizer, data/op_rules.tsv), the trace is a window inside one step
// (nsys-ai's 0.3 s windows of a training run), and the unit the kernel period found is a part of it:
// a layer or block of the forward. No steps then, said, rather than blocks reported as steps.
std::optional<StepWindows> training_window_without_step(const TraceContext& context, const BusiestProcess& busiest,
                                                        const StepWindows& units) {
  const Trace& trace = context.trace();
  const auto& k = trace.kernels;
  std::size_t backward = 0;
  for (const RowIndex i : busiest.order) {
    const auto& c = context.kernel_class(k.demangled_name[i]).op_class;
    if (c == "optimizer") return std::nullopt;
    backward += c == "backward";
  }
  static const auto kAutograd = TextPattern::literal(R"(Backward\d*\b|, seq = \d+)");
  std::size_t autograd = 0;
  std::unordered_map<StringId, bool> seen;
  for (RowIndex i = 0; i < trace.nvtx.size() && autograd < 10; ++i) {
    auto [it, fresh] = seen.emplace(trace.nvtx.text[i], false);
    if (fresh && trace.nvtx.text[i] != kNoString) it->second = kAutograd.search(trace.strings.get(trace.nvtx.text[i]));
    autograd += it->second;
  }
  if (backward == 0 && autograd < 10) return std::nullopt;
  StepWindows none;
  none.source = StepSource::kNone;
  // The anchor's name, as the period's method gives it ("... each launch of NAME (N launches, ...").
  const auto launch_of = units.method.find("each launch of ");
  const auto count_at = units.method.find(" launches, most");
  std::string unit = "its anchor kernel";
  if (launch_of != std::string::npos && count_at != std::string::npos) {
    unit = units.method.substr(launch_of + 15, units.method.rfind(" (", count_at) - launch_of - 15);
  }
  none.method = "no step annotations: the work repeats at each launch of " + unit + " (" + std::to_string(units.windows.size()) +
                " units), but this is training (" +
                (backward > 0 ? std::to_string(backward) + " backward kernels" : std::to_string(autograd) + "+ autograd annotations") +
                ") and no optimizer kernel ran: the trace is a window inside one training step, its units parts of the step "
                "(layers or blocks); no steps";
  return none;
}

StepWindows from_gpu_gaps(const Trace& trace) {
  const auto& k = trace.kernels;
  const auto& g = trace.graph_execs;  // graphs traced whole: compute whose kernels are not itemized
  StepWindows out;
  if (k.size() == 0 && g.size() == 0) {
    out.method = "none: no kernels or CUDA graph executions to find steps in";
    return out;
  }
  // Stretches of GPU work separated by idle gaps far longer than usual.
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  spans.reserve(k.size() + g.size());
  for (RowIndex i = 0; i < k.size(); ++i) spans.push_back({k.start_ns[i], k.end_ns[i]});
  for (RowIndex i = 0; i < g.size(); ++i) spans.push_back({g.start_ns[i], g.end_ns[i]});
  std::sort(spans.begin(), spans.end());
  std::vector<std::int64_t> gaps;
  TimeNs reach = spans[0].second;
  for (std::size_t i = 1; i < spans.size(); ++i) {
    gaps.push_back(std::max<std::int64_t>(0, spans[i].first - reach));
    reach = std::max(reach, spans[i].second);
  }
  std::sort(gaps.begin(), gaps.end());
  const double p90 = gaps.empty() ? 0 : percentile_linear(gaps, 90);
  const std::int64_t threshold = std::max<std::int64_t>(1'000'000, static_cast<std::int64_t>(20 * p90));
  TimeNs begin = spans[0].first;
  reach = spans[0].second;
  for (std::size_t i = 1; i <= spans.size(); ++i) {
    if (i == spans.size() || spans[i].first - reach > threshold) {
      out.windows.push_back({"gpu-segment", begin, reach, 0, Phase::kUnknown});
      if (i < spans.size()) begin = spans[i].first;
    }
    if (i < spans.size()) reach = std::max(reach, spans[i].second);
  }
  out.source = StepSource::kGpuGaps;
  char gap[32];
  std::snprintf(gap, sizeof gap, "%.3f ms", static_cast<double>(threshold) / 1e6);
  out.method = std::string("heuristic: GPU work split at idle gaps > ") + gap +
               " (no step annotations, no regular kernel period)";
  return out;
}

}  // namespace

Result<StepWindows> find_step_windows(const Trace& trace, const StepOptions& options) {
  // Windows classify no kernels: the built-in rules only fill the context's place.
  const TraceContext context(trace, OpRuleSet::builtin());
  return find_step_windows(context, options);
}

Result<StepWindows> find_step_windows(const TraceContext& context, const StepOptions& options) {
  return context.step_windows(options);
}

Result<StepWindows> find_step_windows_uncached(const TraceContext& context, const StepOptions& options) {
  const Trace& trace = context.trace();
  const auto ranges = index_ranges(trace);
  if (options.step_range && ranges.empty()) {
    return make_error(ErrorCode::kNoData, trace.source.path + " has no NVTX ranges, so --step-range cannot be used");
  }
  if (auto annotated = from_annotations(trace, ranges, options)) return std::move(*annotated);
  if (options.step_range) {
    return make_error(ErrorCode::kNotFound, "NVTX range '" + *options.step_range + "' not found in " + trace.source.path);
  }
  const BusiestProcess busiest = busiest_process_kernels(trace);
  if (auto passes = forward_passes_from_modules(context, ranges, busiest)) return std::move(*passes);
  if (auto passes = forward_passes_from_markers(context, busiest)) return std::move(*passes);
  if (auto periodic = from_kernel_period(context, busiest); periodic && periodic->windows.size() >= 3) {
    if (auto partial = training_window_without_step(context, busiest, *periodic)) return std::move(*partial);
    const auto inside = unit_inside_steps(context, *periodic);
    if (!inside) return std::move(*periodic);
    // Ranges holding the units are the steps only where there are about as many as the steps' own
    // kernels say: a step holds a few embedding and sampling kernels (token and position embeddings,
    // a top-k and a draw: at most 4 here), so one range around a decode loop of 20 steps, holding 20
    // or more of them, is the loop, not a step. (A loop of 2 or 3 steps in one range stays ambiguous.)
    StepWindows steps;
    auto held = ranges_holding_units(trace, ranges, *periodic);
    if (held && 4 * held->windows.size() >= inside->markers) {
      steps = std::move(*held);
    } else {
      steps = from_gpu_gaps(trace);
    }
    steps.method = "no step annotations: " + steps.method + "; " + inside->words;
    return steps;
  }
  return from_gpu_gaps(trace);
}

}  // namespace kernscope::report
