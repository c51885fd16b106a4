// Builds the diagnosis from the other analyses; the sentences cite the numbers behind them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <future>
#include <map>
#include <set>
#include <sstream>

#include "analyses/diagnosis/diagnosis_whatif.hpp"
#include "analyses/moe/perfect_router.hpp"
#include "analyses/spec/spec.hpp"
#include "analyses/work/roofline.hpp"
#include "analyses/trace_context.hpp"
#include "base/text_util.hpp"
#include "analyses/diagnosis/diagnosis.hpp"

namespace kernscope {
namespace {

using text::fixed;

std::string pct(double share) { return fixed(share * 100, 1) + " %"; }

std::vector<ClassShare> classes_of(const StepAnalysis& s, Phase phase) {
  // The last group of the phase, as for the headline figures.
  std::string group;
  for (const auto& g : s.groups) {
    if (g.phase == phase) group = g.name;
  }
  std::map<std::string, std::int64_t> ns;
  std::int64_t total = 0;
  for (const auto& st : s.steps) {
    if (st.phase != phase || st.group != group) continue;
    for (const auto& [c, v] : st.class_ns) {
      ns[c] += v;
      total += v;
    }
  }
  std::vector<ClassShare> out;
  for (const auto& [c, v] : ns) out.push_back({c, v, total ? static_cast<double>(v) / static_cast<double>(total) : 0});
  std::sort(out.begin(), out.end(), [](const ClassShare& a, const ClassShare& b) { return a.ns > b.ns; });
  return out;
}

const Finding* find(const std::vector<Finding>& all, const std::string& rule) {
  for (const auto& f : all) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

// A tail anomaly needs a tail: the slowest call at least this many times the median one.
constexpr double kTailRatio = 2.0;

// The time a finding's evidence rows add up to (their first duration column), or -1 when its
// rows measure no time. Rows are capped (--rows), so this is a lower bound.
// The account part a finding's fix acts on (kernscope account's names), or none.
std::string part_of_rule(const std::string& rule) {
  if (rule == "llm_sync_in_loop" || rule == "cuda_api_sync" || rule == "cuda_memset_sync") return "blocked";
  if (rule == "llm_alloc_in_loop") return "host.runtime";
  if (rule == "llm_h2d_in_loop" || rule == "cuda_memcpy_async" || rule == "cuda_memcpy_sync") return "copy";
  if (rule == "gpu_gaps" || rule == "gpu_time_util") return "idle";
  return "";
}

std::int64_t time_involved(const Finding& f) {
  for (std::size_t c = 0; c < f.rows.columns.size(); ++c) {
    if (f.rows.columns[c].unit != Unit::kDuration) continue;
    std::int64_t total = 0;
    for (const auto& row : f.rows.rows) {
      if (const auto* v = std::get_if<std::int64_t>(&row[c])) total += *v;
      else if (const auto* x = std::get_if<double>(&row[c])) total += static_cast<std::int64_t>(*x);
    }
    return total;
  }
  return -1;
}

// The time a finding's evidence rows spend inside [lo, hi) (the steps' span: model loading and
// warm-up before it are not the loop's time), from their Start and Duration columns; for a
// utilization region (an In-Use percentage) only its unused share: a region's length is not what
// it could save, its idle part is. Rows of several devices or overlapping calls add up, like the
// other findings' times. -1 when no row gives a start and a duration. Rows are capped (--rows), so
// this is a lower bound.
// `whole_rows`: a row that reaches past the window's edges counts nothing (a live capture's window:
// what lies past its edge was not recorded, so an idle stretch crossing it is that, not the program's).
std::int64_t time_in_window(const Finding& f, TimeNs lo, TimeNs hi, bool whole_rows = false) {
  const std::size_t none = f.rows.columns.size();
  std::size_t start = none, duration = none, in_use = none;
  for (std::size_t c = 0; c < f.rows.columns.size(); ++c) {
    const Unit unit = f.rows.columns[c].unit;
    if (unit == Unit::kTimestamp && start == none) start = c;
    if (unit == Unit::kDuration && duration == none) duration = c;
    if (unit == Unit::kPercent && in_use == none) in_use = c;
  }
  if (start == none || duration == none) return -1;
  double total = 0;
  std::size_t read = 0;
  for (const auto& row : f.rows.rows) {
    const auto* from = std::get_if<std::int64_t>(&row[start]);
    const auto* length = std::get_if<std::int64_t>(&row[duration]);
    if (!from || !length) continue;
    ++read;
    const TimeNs overlap = std::min(*from + *length, hi) - std::max(*from, lo);
    if (overlap <= 0 || (whole_rows && (*from < lo || *from + *length > hi))) continue;
    const double* pct = in_use == none ? nullptr : std::get_if<double>(&row[in_use]);
    total += static_cast<double>(overlap) * (pct ? std::max(0.0, 100.0 - *pct) / 100.0 : 1.0);
  }
  return read ? static_cast<std::int64_t>(total) : -1;  // no row to tell (--rows 0): not measured
}

// The finding's time inside the capture windows of a live capture, rows crossing a window's edge
// left out; -1 when its rows carry no times or the trace was recorded whole.
std::int64_t time_in_capture_windows(const Finding& f, const Trace& trace) {
  std::int64_t total = 0;
  for (const auto& w : trace.capture_windows) {
    const std::int64_t t = time_in_window(f, w.start, w.end.value_or(INT64_MAX), true);
    if (t < 0) return -1;
    total += t;
  }
  return trace.capture_windows.empty() ? -1 : total;
}

// First start to last end of the trace's GPU work and API calls.
std::int64_t trace_span(const Trace& trace) {
  TimeNs first = INT64_MAX, last = INT64_MIN;
  auto widen = [&](const auto& starts, const auto& ends) {
    for (std::size_t i = 0; i < starts.size(); ++i) {
      first = std::min(first, starts[i]);
      last = std::max(last, ends[i]);
    }
  };
  widen(trace.kernels.start_ns, trace.kernels.end_ns);
  widen(trace.memcpys.start_ns, trace.memcpys.end_ns);
  widen(trace.api_calls.start_ns, trace.api_calls.end_ns);
  return first <= last ? last - first : 0;
}

}  // namespace

Result<Diagnosis> diagnose(const Trace& trace, const OpRuleSet& rules, const StepOptions& step_options,
                           const AnalyzeOptions& analyze_options) {
  Diagnosis d;
  d.trace = trace.source.path;
  d.cut_short = trace.cut_short;
  for (const auto& dev : trace.devices) d.devices.push_back(dev.name);
  if (!trace.capture_windows.empty()) {
    for (const auto& note : trace.notes) {
      if (note.starts_with("recorded in ")) d.recording = note;
    }
  }
  d.kernels = static_cast<std::int64_t>(trace.kernels.size());
  d.api_calls = static_cast<std::int64_t>(trace.api_calls.size());
  // The analyses only read the trace (and the compiled rules), so they run concurrently; ops and
  // steps share one context (the launching-call lookup and the kernel classes, built once). What
  // needs the steps (the roofline, kernscope's LLM rules) starts as soon as they are found, so the
  // longest chain is steps -> LLM rules, not every analysis -> the rest.
  const TraceContext context(trace, rules);
  auto ops_job = std::async(std::launch::async, [&] { return classify_operations(context); });
  // The kernel tail is handed over as soon as it is done (the LLM rules read it); the API tail
  // follows it on the same thread: each holds every duration of its table while it runs (on the
  // 1 GB export 23 and 50 MiB), and at the same time they lifted report's peak past the file's size.
  std::promise<Result<TailResult>> kernel_tail_promise;
  std::shared_future<Result<TailResult>> kernel_tail_ready = kernel_tail_promise.get_future().share();
  auto tails_job = std::async(std::launch::async, [&] {
    try {
      kernel_tail_promise.set_value(tail_statistics(context, TailSubject::kKernel));
    } catch (...) {
      kernel_tail_promise.set_exception(std::current_exception());  // the steps' job must not wait forever
      throw;
    }
    return trace.has(EventKind::kApiCalls) ? tail_statistics(context, TailSubject::kApi) : Result<TailResult>(TailResult{});
  });
  auto rules_job = std::async(std::launch::async, [&] { return run_nsys_rules(trace, analyze_options); });
  // Speed of light: where a source gave the kernels' FLOPs and bytes (recorded shapes), each class's
  // distance from its roof (an action below).
  RooflineOptions sol_options;
  sol_options.grouping = RooflineGrouping::kClass;
  sol_options.rules = &rules;
  sol_options.steps = step_options;
  struct StepsAndAfter {
    Result<StepAnalysis> steps;
    Result<RooflineResult> sol = make_error(ErrorCode::kNoData, "no steps");
    std::vector<Finding> llm_findings;
    StepAccounting accounting;
  };
  auto steps_job = std::async(std::launch::async, [&] {
    StepsAndAfter out;
    out.steps = analyze_steps(context, step_options);
    if (!out.steps) return out;
    RooflineOptions options = sol_options;
    options.step_analysis = &*out.steps;
    auto sol_job = std::async(std::launch::async, [&] { return roofline(trace, options); });
    auto accounting_job = std::async(std::launch::async, [&] { return account_steps(context, *out.steps); });
    // kernscope's LLM rules speak of decode loops and serving: only for LLM inference.
    if (out.steps->workload.kind == WorkloadKind::kLlmInference) {
      const auto& kernel_tail = kernel_tail_ready.get();
      out.llm_findings = run_llm_rules(context, *out.steps, analyze_options, kernel_tail ? &*kernel_tail : nullptr);
    }
    out.sol = sol_job.get();
    out.accounting = accounting_job.get();
    return out;
  });
  auto ops = ops_job.get();
  auto after_steps = steps_job.get();
  auto& steps = after_steps.steps;
  auto api_tail = tails_job.get();
  const auto& kernel_tail = kernel_tail_ready.get();
  d.findings = rules_job.get();
  // A trace without GPU work still gets a report: what it lacks is said, the rest is shown.
  if (ops) {
    d.ops = std::move(*ops);
  } else if (ops.error().code == ErrorCode::kNoData) {
    d.diagnosis.push_back("No GPU kernels or memory operations in this trace: " + ops.error().message);
  } else {
    return std::unexpected(ops.error());
  }
  if (steps) {
    d.steps = std::move(*steps);
    d.accounting = std::move(after_steps.accounting);
  } else if (steps.error().code == ErrorCode::kNoData) {
    d.steps.method = "none (" + steps.error().message + ")";
  } else {
    return std::unexpected(steps.error());
  }
  if (auto moe = analyze_moe_with_router(context, d.steps, d.accounting); moe && moe->present) {
    d.moe = std::move(*moe);
    // Expert load: where the trace shows tokens per expert, the most skewed layer is said, with the
    // perfect-router estimate that tells whether evening it would pay (the guide's 10 % test).
    const MoeLayer* worst = most_skewed_layer(*d.moe);
    if (worst && *worst->imbalance >= 2) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "Experts are unevenly loaded: in MoE layer %lld the busiest expert gets %.2fx the mean tokens "
                    "(kernscope moe lists every layer's tokens per expert).",
                    static_cast<long long>(worst->layer), *worst->imbalance);
      std::string text = line;
      const PerfectRouter& router = d.moe->perfect_router;
      if (router.estimated) {
        text += " Perfect-router estimate: " + router.verdict +
                (router.saving_pct >= 10 ? "; expert load balancing (EPLB, a capacity factor, an auxiliary balance loss) is worth it."
                                         : ".");
      } else {
        text += " Expert load balancing (EPLB, a capacity factor, an auxiliary balance loss) evens it; whether that pays is not "
                "estimated: " + router.why_not + ".";
      }
      d.diagnosis.push_back(text);
    }
  }
  // Speculative decoding, where the engine's markers show it (kernscope spec has the steps).
  if (auto spec = analyze_spec(trace); spec && spec->present) {
    std::string text = "Speculative decoding (" + spec->engine + "): " + std::to_string(spec->steps.size()) + " verify steps";
    char part[256];
    if (spec->acceptance) {
      std::snprintf(part, sizeof part, ", %lld of %lld proposed tokens accepted (%.1f %%)", static_cast<long long>(spec->accepted),
                    static_cast<long long>(spec->proposed), *spec->acceptance * 100);
      text += part;
    }
    if (spec->ms_per_emitted && spec->plain_decode_ms && spec->speedup) {
      std::snprintf(part, sizeof part, "; %.2f ms per emitted token against %.2f ms for a plain decode step (%.2fx%s)", *spec->ms_per_emitted,
                    *spec->plain_decode_ms, *spec->speedup, *spec->speedup < 1 ? ": speculation costs more than it saves here" : "");
      text += part;
    }
    const std::int64_t total = spec->draft_ns + spec->verify_ns;
    if (total > 0) {
      std::snprintf(part, sizeof part, "; drafting is %.0f %% of the verify steps' time%s", 100.0 * static_cast<double>(spec->draft_ns) / static_cast<double>(total),
                    spec->draft_on_critical_path ? ", all of it on the critical path" : "");
      text += part;
    }
    d.diagnosis.push_back(text + " (kernscope spec).");
  }
  d.decode_classes = classes_of(d.steps, Phase::kDecode);
  d.prefill_classes = classes_of(d.steps, Phase::kPrefill);
  for (const auto& k : d.ops.kernels) d.gpu_kernel_ns += k.total_ns;
  for (std::size_t i = 0; i < d.ops.kernels.size() && i < 5; ++i) {
    const auto& k = d.ops.kernels[i];
    d.top_kernels.push_back({k.name, d.gpu_kernel_ns ? static_cast<double>(k.total_ns) / static_cast<double>(d.gpu_kernel_ns) : 0});
  }
  if (kernel_tail) {
    for (const auto& r : kernel_tail->by_tail_score) {
      if (d.kernel_tail.size() < 3 && r.max_over_p50 >= kTailRatio) d.kernel_tail.push_back(r);
    }
  }
  if (api_tail) {
    for (const auto& r : api_tail->by_tail_score) {
      if (d.api_tail.size() < 3 && r.max_over_p50 >= kTailRatio) d.api_tail.push_back(r);
    }
  }
  const bool llm = d.steps.workload.kind == WorkloadKind::kLlmInference;
  for (auto& f : after_steps.llm_findings) d.findings.push_back(std::move(f));

  // Diagnosis and next actions. Each action carries the time it could save where the trace
  // measures it; actions are ranked by that (those whose saving is not measured come after), and a
  // finding involving less than 1 % of the time steps (or the trace) span is neither said nor advised.
  std::vector<ReportAction> actions;
  // An action and its ranking key; its part, change and prediction are filled where they are known.
  auto action = [&](std::int64_t rank_ns, std::string kind, std::string part, std::int64_t time_ns, std::string text) -> ReportAction& {
    ReportAction a;
    a.rank_ns = rank_ns;
    a.kind = std::move(kind);
    a.part = std::move(part);
    a.time_ns = time_ns;
    a.text = std::move(text);
    actions.push_back(std::move(a));
    return actions.back();
  };
  std::int64_t span_ns = 0;
  for (const auto& st : d.steps.steps) span_ns += st.wall_ns;
  if (span_ns == 0) span_ns = trace_span(trace);
  const std::int64_t threshold_ns = span_ns / 100;
  // The loop's time: from the first step's start to the last step's end (host or GPU); the whole
  // trace where there are no steps.
  TimeNs loop_from = INT64_MIN, loop_to = INT64_MAX;
  if (!d.steps.steps.empty()) {
    loop_from = INT64_MAX;
    loop_to = INT64_MIN;
    for (const auto& st : d.steps.steps) {
      loop_from = std::min(loop_from, st.start_ns);
      loop_to = std::max({loop_to, st.end_ns, st.gpu_end_ns});
    }
  }
  auto saving_text = [](std::int64_t ns, const char* how) {
    return std::string(" (") + how + " " + fixed(static_cast<double>(ns) / 1e6, 3) + " ms of the trace)";
  };
  std::set<std::string> said;  // rules already in the diagnosis
  // What a change would give, replayed (diagnosis_whatif.hpp): an action it models is ranked by the
  // time it is predicted to save, not by the time its cause takes, and says the predicted step time.
  std::map<std::string, PredictedChange> predictions;
  auto predicted = [&](const std::string& change) -> const PredictedChange& {
    auto it = predictions.find(change);
    if (it == predictions.end()) it = predictions.emplace(change, predict_change(context, d.steps, d.accounting, change)).first;
    return it->second;
  };
  // The replay's prediction of `change` on the action (or why there is none).
  auto attach = [&](ReportAction& a, const std::string& change) {
    a.change = change;
    const PredictedChange& p = predicted(change);
    if (p.ran && p.predicted_ns > 0) {
      a.predicted = PredictedStep{p.headline, p.traced_ns, p.predicted_ns, "replayed", p.source()};
    } else {
      // No step takes no time: a replay that leaves none is no prediction (a step without GPU work).
      a.why_not_predicted = p.ran ? "the replay leaves the steps no time (" + fixed(static_cast<double>(p.predicted_ns) / 1e6, 3) +
                                        " ms): nothing in them it can price"
                                  : "no steps to replay";
    }
  };
  // The action's saving and the words that end it: the prediction where it ran, else the cause's time.
  auto with_prediction = [&](const std::string& change, std::int64_t cause_ns, const char* how) -> std::pair<std::int64_t, std::string> {
    const PredictedChange& p = predicted(change);
    if (!p.ran) return {cause_ns, saving_text(cause_ns, how)};
    return {p.saving_ns(), " (" + std::string(how) + " " + fixed(static_cast<double>(cause_ns) / 1e6, 3) + " ms of the trace; " + p.text() + ")"};
  };

  // Where the steps' time goes (the accounting) comes first, and each category that takes a
  // share of the loop leads to its causes; the time it takes is what the action could recover at
  // most. host.launch is the launch-bound finding's below when that fired.
  // One scope (the steady steps: the last group of each phase) for the diagnosis line and every
  // action's share, as the headlines read; the whole loop where there is no warm-up group.
  const TimeAccount& loop = d.accounting.steady_is_loop ? d.accounting.loop : d.accounting.steady;
  std::string steady_scope;
  for (const auto& g : d.accounting.steady_groups) steady_scope += (steady_scope.empty() ? "" : ", ") + g;
  auto loop_share = [&](std::int64_t ns) { return loop.window_ns > 0 ? static_cast<double>(ns) / static_cast<double>(loop.window_ns) : 0.0; };
  auto parts_of = [&](const std::string& prefix, std::size_t n) {
    std::vector<std::pair<std::int64_t, std::string>> parts;
    for (const auto& [k, v] : loop.parts) {
      if (k.starts_with(prefix) && v > 0) parts.push_back({v, k.substr(prefix.size())});
    }
    std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    std::string out;
    for (std::size_t i = 0; i < parts.size() && i < n; ++i) out += (i ? ", " : "") + parts[i].second + " " + pct(loop_share(parts[i].first));
    return out;
  };
  // The time an account part holds in the steady steps (-1: no such part, or no account).
  auto steady_part_time = [&](const std::string& part) -> std::int64_t {
    if (part.empty() || loop.window_ns <= 0) return -1;
    for (const TimeCategory c : kAllTimeCategories) {
      if (part == category_name(c)) return loop.at(c);
    }
    const auto it = loop.parts.find(part);
    return it == loop.parts.end() ? 0 : it->second;
  };
  if (loop.window_ns > 0) {
    const TimeCategory b = loop.bottleneck();
    std::string line = "Where the steps' time goes: " + std::string(category_name(b)) + " " + pct(loop_share(loop.at(b)));
    for (const TimeCategory c : kAllTimeCategories) {
      if (c != b && loop_share(loop.at(c)) >= 0.05) line += ", " + std::string(category_name(c)) + " " + pct(loop_share(loop.at(c)));
    }
    d.diagnosis.insert(d.diagnosis.begin(), line + (d.accounting.steady_is_loop ? std::string(" (kernscope account).")
                                                                                : " (the steady steps: " + steady_scope +
                                                                                      "; earlier groups left out; kernscope account)."));
    const std::int64_t copy = loop.at(TimeCategory::kCopy);
    if (copy >= threshold_ns && loop_share(copy) >= 0.05) {
      std::string pageable = loop_share(loop.pageable_copy_ns) >= 0.01 ? "; " + pct(loop_share(loop.pageable_copy_ns)) + " from pageable memory" : "";
      const auto [saving, why] = with_prediction("overlap-copies", copy, "up to");
      attach(action(saving, "overlap-copies", "copy", copy,
                    "Take the copies off the critical path: the GPU does nothing but copy for " + pct(loop_share(copy)) +
                        " of the steps' time (" + parts_of("copy.", 3) + pageable + "): keep the data on the GPU where "
                        "it is reused, pin host buffers, and overlap copies with compute on their own stream" + why + "."),
             "overlap-copies");
    }
    const std::int64_t comm = loop.at(TimeCategory::kCommunication);
    if (comm >= threshold_ns && loop_share(comm) >= 0.05) {
      const auto [saving, why] = with_prediction("overlap-comm", comm, "up to");
      attach(action(saving, "overlap-comm", "communication", comm,
                    "Overlap communication with compute: collectives run with no compute beside them for " +
                        pct(loop_share(comm)) + " of the steps' time (exposed communication): start them earlier "
                        "(bucketing, prefetch), run them on their own stream, or split compute so it hides them" + why + "."),
             "overlap-comm");
    }
    const std::int64_t blocked = loop.at(TimeCategory::kBlocked);
    if (blocked >= threshold_ns && loop_share(blocked) >= 0.02) {
      const auto [saving, why] = with_prediction("no-sync", blocked, "up to");
      attach(action(saving, "remove-waits", "blocked", blocked,
                    "Remove the host's waits while the GPU is idle: a host thread waits in " + parts_of("blocked.", 3) +
                        " of the steps' time with no GPU work running, so it waits for the host itself (a "
                        "callback, another thread, a synchronous copy), not for the GPU: make the call "
                        "asynchronous or move what it waits for off the step" + why + "."),
             "no-sync");
    }
    // Launch-bound steps outside LLM decode (the LLM rule below speaks for decode loops).
    const std::int64_t launch = loop.parts.count("host.launch") ? loop.parts.at("host.launch") : 0;
    if (const Finding* lb = find(d.findings, "llm_launch_bound");
        launch >= threshold_ns && loop_share(launch) >= 0.10 && !(lb && lb->count > 0)) {
      const auto [saving, why] = with_prediction("graphs", launch, "up to");
      attach(action(saving, "launch-less", "host.launch", launch,
                    "Launch less from the host: the GPU idles while the host launches work for " + pct(loop_share(launch)) +
                        " of the steps' time (the launch calls and the framework's time between them): capture "
                        "the step in a CUDA graph (torch.cuda.graphs, torch.compile mode=\"reduce-overhead\") or "
                        "fuse kernels so fewer are launched" + why + "."),
             "graphs");
    }
    const std::int64_t framework = loop.parts.count("host.framework") ? loop.parts.at("host.framework") : 0;
    if (framework >= threshold_ns && loop_share(framework) >= 0.05) {
      std::vector<std::pair<std::int64_t, std::string>> ranges;
      for (const auto& [k, v] : loop.framework) ranges.push_back({v, k});
      std::stable_sort(ranges.begin(), ranges.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      std::string where;
      for (std::size_t i = 0; i < ranges.size() && i < 2; ++i) where += (i ? "; " : "") + ranges[i].second + " " + pct(loop_share(ranges[i].first));
      action(framework, "host-work", "host.framework", framework,
             "Take host work off the GPU's critical path: the GPU idles while the host runs framework code for " +
                 pct(loop_share(framework)) + " of the steps' time (" + where + "): data-loader workers and "
                 "pinned memory for input pipelines, preprocessing overlapped with the previous step" +
                 saving_text(framework, "up to") + ".")
          .why_not_predicted = "no what-if change stands for moving framework code off the step (host=F scales all host work)";
    }
    const std::int64_t idle = loop.at(TimeCategory::kIdle);
    if (loop_share(idle) >= 0.10) {
      d.diagnosis.push_back("Nothing recorded explains " + pct(loop_share(idle)) + " of the steps' time (the GPU idle, no host call "
                            "or range open): trace the host too (kernscope record --sample cpu, nsys --sample=cpu "
                            "--python-sampling=true) to see what ran there.");
    }
  }

  const auto& dw = d.steps.decode_wall;
  if (const Finding* lb = find(d.findings, "llm_launch_bound"); lb && lb->count > 0) {
    said.insert(lb->rule);
    d.diagnosis.push_back("Decode is launch/host-bound: " + lb->evidence + ".");
    const auto bound = static_cast<std::int64_t>((dw.p50 - d.steps.decode_kernel_ns.p50) * static_cast<double>(dw.count));
    const PredictedChange& p = predicted("graphs");
    const std::int64_t saving = p.ran ? p.saving_ns() : bound;
    auto& graphs = action(saving, "cuda-graphs", "host.launch", bound,
                          std::string(p.ran ? p.headline + " " + fixed(static_cast<double>(p.traced_ns) / 1e6, 3) + " -> " +
                                                  fixed(static_cast<double>(p.predicted_ns) / 1e6, 3) + " ms predicted with CUDA graphs: "
                                            : "") +
                              "Capture the decode step in a CUDA graph (torch.compile mode=\"reduce-overhead\" or the engine's "
                              "CUDA-graph mode): a decode step takes " + fixed(dw.p50 / 1e6, 3) + " ms (p50) while its kernels "
                              "run for " + fixed(d.steps.decode_kernel_ns.p50 / 1e6, 3) + " ms, so the host, not the GPU, sets "
                              "the time per token" + (p.ran ? " (" + p.source() + ")" : saving_text(saving, "about")) + ".");
    graphs.evidence = lb->evidence;
    attach(graphs, "graphs");
  }
  // Speed of light: each class's distance from its roof is an action ranked by the time it would
  // save at the roof. Without steps (a trace without GPU work), the roofline runs here on its own.
  if (!steps) {
    sol_options.step_analysis = &d.steps;
    after_steps.sol = roofline(trace, sol_options);
  }
  std::set<std::string> sol_classes;  // classes the roofline measured
  if (auto& sol = after_steps.sol; sol && sol->covered_ns > 0 && sol->peaks.peaks) {
    d.diagnosis.push_back("Speed of light: " + roofline_summary(*sol)[2] + ".");
    for (const auto& line : sol->headline) d.diagnosis.push_back(line + ".");
    for (const auto& row : sol->rows) {
      if (!row.has_work) continue;
      sol_classes.insert(row.name);
      const auto saving = static_cast<std::int64_t>(row.recoverable_ns());
      if (saving < threshold_ns || saving <= 0) continue;
      const double seconds = static_cast<double>(row.time_ns) / 1e9;
      const std::string how = row.roof == Roof::kMemory    ? "move fewer bytes (quantized weights or KV cache, fused neighbours, larger batches)"
                              : row.roof == Roof::kCompute ? "use faster math (better-tuned GEMM tiles, FP8 where accuracy allows)"
                                                           : "launch fewer, larger kernels (fusion, CUDA graphs)";
      auto& roof = action(saving, "roofline", "gpu." + row.name, row.time_ns,
                          "Bring the " + row.name + " kernels to their " + std::string(roof_name(row.roof)) + " roof: they run at " +
                              pct(row.percent_of_roof() / 100) + " of it (" + fixed(row.flops / seconds / 1e12, 3) + " TFLOP/s, " +
                              fixed(row.bytes / seconds / 1e9, 1) + " GB/s over " + std::to_string(row.count) + " kernels, " +
                              fixed(static_cast<double>(row.time_ns) / 1e6, 3) + " ms; ideal " + fixed(row.ideal_ns / 1e6, 3) +
                              " ms): " + how + saving_text(saving, "up to") + ".");
      roof.change = "roof=" + row.name;
      roof.why_not_predicted = "a roofline bound (its kernels at their roof: " + fixed(row.ideal_ns / 1e6, 3) + " of " +
                               fixed(static_cast<double>(row.time_ns) / 1e6, 3) + " ms), not replayed here (kernscope whatif --change roof=" +
                               row.name + " replays it)";
    }
  }
  if (!d.decode_classes.empty()) {
    const auto& top = d.decode_classes.front();
    std::string line = "In decode, " + top.op_class + " takes " + pct(top.share) + " of kernel time";
    if (d.decode_classes.size() > 1) line += ", then " + d.decode_classes[1].op_class + " " + pct(d.decode_classes[1].share);
    if (d.decode_classes.size() > 2) line += " and " + d.decode_classes[2].op_class + " " + pct(d.decode_classes[2].share);
    d.diagnosis.push_back(line + ".");
    if (sol_classes.contains(top.op_class)) {
      // The roofline measured it: its action above quotes the numbers.
    } else if (top.op_class == "gemv" || top.op_class == "gemm" || top.op_class == "quantized_gemm") {
      action(-1, "measure", "gpu." + top.op_class, -1,
             "Measure the bandwidth efficiency of the decode " + top.op_class + " kernels (" + pct(top.share) +
                 " of decode kernel time): bytes of weights read per step / kernel time against the device's "
                 "memory bandwidth; batch-1 decode is memory-bound, so that ratio is the ceiling.")
          .why_not_predicted = "no kernel work known for these kernels (a model config or recorded shapes would give their roofline)";
    } else if (top.op_class == "elementwise" || top.op_class == "copy_cast" || top.op_class == "norm") {
      action(-1, "fuse", "gpu." + top.op_class, -1,
             "Fuse the " + top.op_class + " kernels (" + pct(top.share) +
                 " of decode kernel time) with their neighbours (torch.compile or fused kernels).")
          .why_not_predicted = "what fusion saves depends on the fused kernel, which the trace does not hold";
    }
  }
  if (const Finding* tiny = find(d.findings, "llm_tiny_kernels"); tiny && tiny->count > 0) {
    said.insert(tiny->rule);
    d.diagnosis.push_back("Kernels are tiny: " + tiny->evidence + ".");
    auto& fuse = action(-1, "fuse", "gpu.elementwise", -1,
                        "Fuse small elementwise kernels (norm, RoPE, activation, residual adds): " + tiny->evidence + ".");
    fuse.evidence = tiny->evidence;
    fuse.why_not_predicted = "what fusion saves depends on the fused kernel, which the trace does not hold";
  }
  // Findings whose evidence rows measure the time involved: said and advised only above the threshold.
  auto sized = [&](const Finding& f, const std::string& sentence, const std::string& text) {
    said.insert(f.rule);
    const std::int64_t involved = time_involved(f);
    if (involved >= 0 && involved < threshold_ns) return;
    d.diagnosis.push_back(sentence);
    // Evidence rows are capped (--rows), so their time is a lower bound.
    auto& a = action(involved, "rule:" + f.rule, part_of_rule(f.rule), involved,
                     text + (involved >= 0 ? saving_text(involved, "at least") : std::string()) + ".");
    a.evidence = f.evidence;
    a.why_not_predicted = "no what-if change stands for this finding's fix";
  };
  for (const char* rule : {"llm_sync_in_loop", "llm_alloc_in_loop", "llm_h2d_in_loop", "llm_graphs_hidden"}) {
    const Finding* f = find(d.findings, rule);
    if (!f || f->count == 0) continue;
    // A synchronization costs the loop only where the GPU idles while the host waits (the
    // accounting's blocked time): syncs on a GPU-bound loop return when work that had to run anyway
    // ends, and removing them saves nothing.
    if (f->rule == "llm_sync_in_loop" && loop.window_ns > 0 && loop.at(TimeCategory::kBlocked) < threshold_ns) {
      said.insert(f->rule);
      d.diagnosis.push_back(f->title + ": " + f->evidence + "; the GPU is idle during only " +
                            fixed(static_cast<double>(loop.at(TimeCategory::kBlocked)) / 1e6, 3) +
                            " ms of those waits (kernscope account), so removing them would save little.");
      continue;
    }
    if (f->rule == "llm_sync_in_loop" && predicted("no-sync").ran) {
      // What removing them would give, replayed: the action is ranked by that.
      said.insert(f->rule);
      const PredictedChange& p = predicted("no-sync");
      d.diagnosis.push_back(f->title + ": " + f->evidence + ".");
      auto& a = action(p.saving_ns(), "rule:" + f->rule, "blocked", loop.at(TimeCategory::kBlocked),
                       f->action + " (" + f->evidence + "; " + p.text() + ").");
      a.evidence = f->evidence;
      attach(a, "no-sync");
      continue;
    }
    sized(*f, f->title + ": " + f->evidence + ".", f->action + " (" + f->evidence + ")");
  }
  if (const Finding* f = find(d.findings, "cuda_memcpy_async");
      f && f->count > 0 && d.ops.setup_copies > 0 && d.ops.setup_copies == static_cast<std::int64_t>(trace.memcpys.size())) {
    // Every copy of the trace ran before the first step (loading the model): start-up time, not a
    // step's, so no serving advice (setup_split.hpp).
    said.insert(f->rule);
    d.diagnosis.push_back("Async copies from pageable memory (" + f->evidence +
                          ") all ran before the first step (setup: loading the model), not in the steps.");
  } else if (const Finding* f = find(d.findings, "cuda_memcpy_async"); f && f->count > 0) {
    sized(*f, "Async copies from pageable memory run synchronously: " + f->evidence + ".",
          "Pin the host buffers of those copies (" + f->evidence + ")" + (llm ? ", or move them out of the serving path" : ""));
  }
  if (dw.count > 0 && dw.p50 > 0 && static_cast<double>(dw.max) > 2 * dw.p50) {
    d.diagnosis.push_back("Decode steps have a tail: p50 " + fixed(dw.p50 / 1e6, 3) + " ms, p99 " + fixed(dw.p99 / 1e6, 3) +
                          " ms, max " + fixed(static_cast<double>(dw.max) / 1e6, 3) + " ms.");
  }
  bool advised_gaps = false;
  // Warnings of nsys's rules reach the diagnosis too, above the same threshold, each with its
  // rule's action (ranked by the time its evidence rows add up to, where they measure time).
  for (const auto& f : d.findings) {
    if (f.skipped || f.count == 0 || f.severity != "warning" || said.contains(f.rule)) continue;
    // nsys's synchronization warning, as the LLM rule above: advised only where the GPU idles
    // while the host waits; otherwise said with the accounting's blocked time.
    if (f.rule == "cuda_api_sync" && loop.window_ns > 0 && loop.at(TimeCategory::kBlocked) < threshold_ns) {
      d.diagnosis.push_back(f.title + ": " + f.evidence + "; the GPU is idle during only " +
                            fixed(static_cast<double>(loop.at(TimeCategory::kBlocked)) / 1e6, 3) +
                            " ms of those waits (kernscope account), so removing them would save little.");
      continue;
    }
    const std::int64_t involved = time_involved(f);
    if (involved >= 0 && involved < threshold_ns) continue;
    // An idle stretch is the program's only inside a capture window; other findings' rows (a long
    // kernel, a copy) may end after a window closed and still be the program's.
    const bool idle_rule = f.rule == "gpu_gaps" || f.rule == "gpu_time_util";
    if (const std::int64_t recorded = idle_rule ? time_in_capture_windows(f, trace) : -1; recorded >= 0 && recorded < threshold_ns) continue;
    d.diagnosis.push_back(f.title + ": " + f.evidence + ".");
    if (f.action.empty()) continue;
    // An idle GPU in launch-bound steps is that finding's, and its action (CUDA graphs) is the one
    // to take: the timeline rules' generic advice would count the same idle time again.
    if ((f.rule == "gpu_time_util" || f.rule == "gpu_gaps") && said.contains("llm_launch_bound")) continue;
    // Gaps and low-utilization regions are the same idle GPU seen twice: the gaps (places in
    // time, the more specific) are advised, the regions then only said.
    if (f.rule == "gpu_time_util" && advised_gaps) continue;
    std::string advice = f.action;
    advice[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(advice[0])));
    // Where the rows say when, only their time inside the steps counts (time_in_window).
    const std::int64_t in_window = time_in_window(f, loop_from, loop_to);
    std::int64_t saving = in_window >= 0 ? in_window : involved;
    if (in_window == 0) continue;  // all of it before or after the steps: nothing the loop can gain
    // An action only where its part holds time in the steady steps (one scope): idle regions of a
    // warm-up do not make a GPU-bound loop's first action; what the part holds bounds the rest.
    if (const std::int64_t held = steady_part_time(part_of_rule(f.rule)); held >= 0) {
      if (held < threshold_ns) continue;
      saving = saving < 0 ? held : std::min(saving, held);
    }
    advised_gaps |= f.rule == "gpu_gaps";
    // nsys's synchronization and synchronous-copy warnings: what removing them gives, replayed.
    if (const char* change = f.rule == "cuda_api_sync" ? "no-sync" : f.rule == "cuda_memcpy_sync" ? "overlap-copies" : nullptr) {
      if (const PredictedChange& p = predicted(change); p.ran) {
        auto& a = action(p.saving_ns(), "rule:" + f.rule, part_of_rule(f.rule), saving, advice + " (" + f.title + ": " + f.evidence + "; " + p.text() + ").");
        a.evidence = f.evidence;
        attach(a, change);
        continue;
      }
    }
    auto& a = action(saving, "rule:" + f.rule, part_of_rule(f.rule), saving,
                     advice + " (" + f.title + ": " + f.evidence + ")" +
                         (saving >= 0 ? saving_text(saving, in_window >= 0 && !d.steps.steps.empty() ? "inside the steps, at least" : "at least")
                                      : std::string()) + ".");
    a.evidence = f.evidence;
    a.why_not_predicted = "no what-if change stands for this finding's fix";
  }
  // What no rule proposed but the replay shows: a change that would shorten the headline group's
  // steps by 10 % or more (a sync that keeps the host from running ahead on a GPU-bound loop, launches
  // a graph would hide, copies to overlap) is an action, ranked by the time it saves.
  if (!d.steps.steps.empty()) {
    struct Candidate {
      const char* change;
      const char* part;
      const char* text;
    };
    for (const Candidate& c : {Candidate{"no-sync", "blocked", "Let the host run ahead of the GPU: remove the per-step synchronizations (wait on "
                                                               "events only where a result is read, keep a step or two in flight)"},
                               Candidate{"graphs", "host.launch", "Capture the step in a CUDA graph (torch.cuda.graphs, torch.compile "
                                                                  "mode=\"reduce-overhead\", the engine's CUDA-graph mode)"},
                               Candidate{"overlap-copies", "copy", "Overlap the copies with compute: pinned host buffers, "
                                                                   "cudaMemcpyAsync on their own stream, double-buffered"}}) {
      if (predictions.contains(c.change)) continue;  // a rule's action already carries it
      const PredictedChange& p = predicted(c.change);
      if (!p.ran || p.traced_ns <= 0 || p.saving_ns() < threshold_ns) continue;
      if (static_cast<double>(p.traced_ns - p.predicted_ns) < 0.10 * static_cast<double>(p.traced_ns)) continue;
      attach(action(p.saving_ns(), "replay", c.part, -1, std::string(c.text) + ": no rule flagged it, but the replay does (" + p.text() + ")."),
             c.change);
    }
  }
  std::stable_sort(actions.begin(), actions.end(), [](const ReportAction& a, const ReportAction& b) {
    if ((a.rank_ns < 0) != (b.rank_ns < 0)) return b.rank_ns < 0;
    return a.rank_ns > b.rank_ns;
  });
  d.next_actions = std::move(actions);
  if (d.diagnosis.empty()) d.diagnosis.push_back("No rule fired: nothing stands out in this trace.");
  return d;
}

}  // namespace kernscope
