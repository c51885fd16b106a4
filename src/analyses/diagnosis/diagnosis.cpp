// Builds the diagnosis from the other analyses; the sentences cite the numbers behind them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <future>
#include <map>
#include <set>
#include <sstream>

#include "analyses/ops.hpp"
#include "analyses/steps/analyze_steps.hpp"
#include "analyses/diagnosis/advice.hpp"
#include "analyses/moe/perfect_router.hpp"
#include "analyses/spec/spec.hpp"
#include "analyses/work/roofline.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "base/free_memory.hpp"
#include "base/stage_clock.hpp"

namespace kernscope {
namespace {

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
      if (note.kind == "capture_windows") d.recording = note.text;
    }
  }
  d.kernels = static_cast<std::int64_t>(trace.kernels.size());
  d.api_calls = static_cast<std::int64_t>(trace.api_calls.size());
  // The analyses only read the trace (and the compiled rules), so they run concurrently; ops and
  // steps share one context (the launching-call lookup and the kernel classes, built once). What
  // needs the steps (the roofline, kernscope's LLM rules) starts as soon as they are found, so the
  // longest chain is steps -> LLM rules, not every analysis -> the rest.
  // KERNSCOPE_PHASE_TIMES: each stage's end on standard error (base/stage_clock.hpp).
  const TraceContext context(trace, rules);
  auto launch_facts_job = std::async(std::launch::async, [&] { context.build_launch_facts(); });
  auto ops_job = std::async(std::launch::async, [&] {
    auto ops = classify_operations(context);
    stage_mark("ops done");
    return ops;
  });
  // The kernel tail is handed over as soon as it is done (the LLM rules read it); the API tail
  // follows it on the same thread: each holds every duration of its table while it runs (on the
  // 1 GB export 23 and 50 MiB), and at the same time they lifted report's peak past the file's size.
  std::promise<Result<TailResult>> kernel_tail_promise;
  std::shared_future<Result<TailResult>> kernel_tail_ready = kernel_tail_promise.get_future().share();
  auto tails_job = std::async(std::launch::async, [&] {
    try {
      kernel_tail_promise.set_value(tail_statistics(context, TailSubject::kKernel));
      stage_mark("kernel tail done");
    } catch (...) {
      kernel_tail_promise.set_exception(std::current_exception());  // the steps' job must not wait forever
      throw;
    }
    return trace.has(EventKind::kApiCalls) ? tail_statistics(context, TailSubject::kApi) : Result<TailResult>(TailResult{});
  });
  auto rules_job = std::async(std::launch::async, [&] {
    auto findings = run_nsys_rules(trace, analyze_options);
    stage_mark("nsys rules done");
    return findings;
  });
  // What the account reads whatever the steps, built while they are found (it needs none of them).
  std::shared_future<std::shared_ptr<const AccountSources>> account_sources_ready =
      std::async(std::launch::async, [&] {
        auto sources = account_sources(context);
        stage_mark("account sources done");
        return sources;
      }).share();
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
    stage_mark("steps done");
    if (!out.steps) return out;
    RooflineOptions options = sol_options;
    options.step_analysis = &*out.steps;
    auto sol_job = std::async(std::launch::async, [&] {
      auto sol = roofline(trace, options);
      stage_mark("roofline done");
      return sol;
    });
    auto accounting_job = std::async(std::launch::async, [&] {
      auto accounting = account_steps(*account_sources_ready.get(), *out.steps);
      stage_mark("account done");
      return accounting;
    });
    // kernscope's LLM rules speak of decode loops and serving: only for LLM inference.
    if (out.steps->workload.kind == WorkloadKind::kLlmInference) {
      const auto& kernel_tail = kernel_tail_ready.get();
      out.llm_findings = run_llm_rules(context, *out.steps, analyze_options, kernel_tail ? &*kernel_tail : nullptr);
      stage_mark("LLM rules done");
    }
    out.sol = sol_job.get();
    out.accounting = accounting_job.get();
    return out;
  });
  launch_facts_job.get();
  auto ops = ops_job.get();
  auto after_steps = steps_job.get();
  account_sources_ready = {};  // read by the account alone: freed before the replays
  auto& steps = after_steps.steps;
  auto api_tail = tails_job.get();
  const auto& kernel_tail = kernel_tail_ready.get();
  d.findings = rules_job.get();
  // A trace without GPU work still gets a report: what it lacks is said, the rest is shown.
  if (ops) {
    d.ops = std::move(*ops);
  } else if (ops.error().code == ErrorCode::kNoData) {
    d.diagnosis.push_back(diagnosis_line::NoGpuWork{ops.error().message});
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
      const PerfectRouter& router = d.moe->perfect_router;
      d.diagnosis.push_back(diagnosis_line::ExpertImbalance{worst->layer, *worst->imbalance, router.estimated, router.verdict, router.why_not,
                                                            router.saving_pct});
    }
  }
  // Speculative decoding, where the engine's markers show it (kernscope spec has the steps).
  if (auto spec = analyze_spec(trace); spec && spec->present) {
    d.diagnosis.push_back(diagnosis_line::Speculation{spec->engine, static_cast<std::int64_t>(spec->steps.size()), spec->accepted, spec->proposed,
                                                      spec->acceptance, spec->ms_per_emitted, spec->plain_decode_ms, spec->speedup,
                                                      spec->draft_ns, spec->verify_ns, spec->draft_on_critical_path});
  }
  d.decode_classes = classes_of(d.steps, Phase::kDecode);
  d.prefill_classes = classes_of(d.steps, Phase::kPrefill);
  for (const auto& k : d.ops.kernels) d.gpu_kernel_ns += k.total_ns;
  for (std::size_t i = 0; i < d.ops.kernels.size() && i < 5; ++i) {
    const auto& k = d.ops.kernels[i];
    d.top_kernels.push_back({k.name, d.gpu_kernel_ns ? static_cast<double>(k.total_ns) / static_cast<double>(d.gpu_kernel_ns) : 0});
  }
  if (kernel_tail) {
    d.kernel_tail_by_total = kernel_tail->by_total;
    for (const auto& r : kernel_tail->by_tail_score) {
      if (d.kernel_tail.size() < 3 && r.max_over_p50 >= kTailRatio) d.kernel_tail.push_back(r);
    }
  }
  if (api_tail) {
    for (const auto& r : api_tail->by_tail_score) {
      if (d.api_tail.size() < 3 && r.max_over_p50 >= kTailRatio) d.api_tail.push_back(r);
    }
  }
  for (auto& f : after_steps.llm_findings) d.findings.push_back(std::move(f));

  // The diagnosis: where the steady steps' time goes first, then what the rules found, each
  // finding said only where the time it involves reaches 1 % of the steps' span (or the trace's).
  // The next actions come from the account and the replay (advice.hpp), not from these sentences.
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
  std::set<std::string> said;  // rules already in the diagnosis
  // One scope (the steady steps: the last group of each phase) for the diagnosis line, as the
  // headlines read; the whole loop where there is no warm-up group.
  const TimeAccount& loop = d.accounting.steady_is_loop ? d.accounting.loop : d.accounting.steady;
  auto loop_share = [&](std::int64_t ns) { return loop.window_ns > 0 ? static_cast<double>(ns) / static_cast<double>(loop.window_ns) : 0.0; };
  auto part_time = [&](const char* part) { return loop.parts.count(part) ? loop.parts.at(part) : 0; };
  if (loop.window_ns > 0) {
    const TimeCategory b = loop.bottleneck();
    diagnosis_line::WhereTimeGoes where;
    where.categories.push_back({std::string(category_name(b)), loop_share(loop.at(b))});
    for (const TimeCategory c : kAllTimeCategories) {
      if (c != b && loop_share(loop.at(c)) >= 0.05) where.categories.push_back({std::string(category_name(c)), loop_share(loop.at(c))});
    }
    if (!d.accounting.steady_is_loop) where.scope = d.accounting.steady_groups;
    d.diagnosis.insert(d.diagnosis.begin(), std::move(where));
    if (const std::int64_t queued = part_time("idle.queued"); loop_share(queued) >= 0.05) {
      d.diagnosis.push_back(diagnosis_line::IdleQueued{loop_share(queued)});
    }
    if (const std::int64_t idle = part_time("idle.unexplained"); loop_share(idle) >= 0.10) {
      d.diagnosis.push_back(diagnosis_line::IdleUnexplained{loop_share(idle)});
    }
  }

  const auto& dw = d.steps.decode_wall;
  if (const Finding* lb = find(d.findings, "llm_launch_bound"); lb && lb->count > 0) {
    said.insert(lb->rule);
    d.diagnosis.push_back(diagnosis_line::RuleFinding{lb->rule, lb->title, lb->evidence});
  }
  // Speed of light: without steps (a trace without GPU work), the roofline runs here on its own.
  if (!steps) {
    sol_options.step_analysis = &d.steps;
    after_steps.sol = roofline(trace, sol_options);
  }
  if (auto& sol = after_steps.sol; sol && sol->covered_ns > 0 && sol->peaks.peaks) {
    d.diagnosis.push_back(diagnosis_line::RooflineCoverage{sol->kernel_ns, sol->covered_ns, sol->covered_by_source, sol->step_work_source});
    for (const auto& figure : sol->headline) d.diagnosis.push_back(diagnosis_line::RooflineFigure{figure, sol->latency_floor_ns});
  }
  if (!d.decode_classes.empty()) {
    diagnosis_line::DecodeClasses classes;
    for (std::size_t i = 0; i < d.decode_classes.size() && i < 3; ++i) classes.classes.push_back({d.decode_classes[i].op_class, d.decode_classes[i].share});
    d.diagnosis.push_back(std::move(classes));
  }
  if (const Finding* tiny = find(d.findings, "llm_tiny_kernels"); tiny && tiny->count > 0) {
    said.insert(tiny->rule);
    d.diagnosis.push_back(diagnosis_line::RuleFinding{tiny->rule, tiny->title, tiny->evidence});
  }
  // Findings whose evidence rows measure the time involved: said only above the threshold.
  auto sized = [&](const Finding& f) {
    said.insert(f.rule);
    const std::int64_t involved = time_involved(f);
    if (involved >= 0 && involved < threshold_ns) return;
    d.diagnosis.push_back(diagnosis_line::RuleFinding{f.rule, f.title, f.evidence});
  };
  for (const char* rule : {"llm_sync_in_loop", "llm_alloc_in_loop", "llm_h2d_in_loop", "llm_graphs_hidden"}) {
    const Finding* f = find(d.findings, rule);
    if (!f || f->count == 0) continue;
    // A synchronization costs the loop only where the GPU idles while the host waits (the
    // accounting's blocked time): syncs on a GPU-bound loop return when work that had to run anyway
    // ends, and removing them saves nothing.
    if (f->rule == "llm_sync_in_loop" && loop.window_ns > 0 && loop.at(TimeCategory::kBlocked) < threshold_ns) {
      said.insert(f->rule);
      d.diagnosis.push_back(diagnosis_line::CheapWaits{f->title, f->evidence, loop.at(TimeCategory::kBlocked)});
      continue;
    }
    sized(*f);
  }
  if (const Finding* f = find(d.findings, "cuda_memcpy_async");
      f && f->count > 0 && d.ops.setup_copies > 0 && d.ops.setup_copies == static_cast<std::int64_t>(trace.memcpys.size())) {
    // Every copy of the trace ran before the first step (loading the model): start-up time, not a
    // step's (setup_split.hpp).
    said.insert(f->rule);
    d.diagnosis.push_back(diagnosis_line::SetupCopies{f->evidence});
  } else if (const Finding* f = find(d.findings, "cuda_memcpy_async"); f && f->count > 0) {
    sized(*f);
  }
  if (dw.count > 0 && dw.p50 > 0 && static_cast<double>(dw.max) > 2 * dw.p50) {
    d.diagnosis.push_back(diagnosis_line::DecodeTail{dw.p50, dw.p99, dw.max});
  }
  // Warnings of nsys's rules reach the diagnosis too, above the same threshold.
  for (const auto& f : d.findings) {
    if (f.skipped || f.count == 0 || f.severity != "warning" || said.contains(f.rule)) continue;
    // nsys's synchronization warning, as the LLM rule above: said with the accounting's blocked time
    // where the GPU hardly idles while the host waits.
    if (f.rule == "cuda_api_sync" && loop.window_ns > 0 && loop.at(TimeCategory::kBlocked) < threshold_ns) {
      d.diagnosis.push_back(diagnosis_line::CheapWaits{f.title, f.evidence, loop.at(TimeCategory::kBlocked)});
      continue;
    }
    const std::int64_t involved = time_involved(f);
    if (involved >= 0 && involved < threshold_ns) continue;
    // An idle stretch is the program's only inside a capture window; other findings' rows (a long
    // kernel, a copy) may end after a window closed and still be the program's.
    const bool idle_rule = f.rule == "gpu_gaps" || f.rule == "gpu_time_util";
    if (const std::int64_t recorded = idle_rule ? time_in_capture_windows(f, trace) : -1; recorded >= 0 && recorded < threshold_ns) continue;
    // Where the rows say when, only their time inside the steps counts: all of it before or after
    // the steps is nothing the loop can gain.
    if (time_in_window(f, loop_from, loop_to) == 0) continue;
    d.diagnosis.push_back(diagnosis_line::RuleFinding{f.rule, f.title, f.evidence});
  }
  AdviceInputs advice;
  advice.context = &context;
  advice.steps = &d.steps;
  advice.accounting = &d.accounting;
  advice.findings = &d.findings;
  advice.roofline = after_steps.sol ? &*after_steps.sol : nullptr;
  advice.moe = d.moe ? &*d.moe : nullptr;
  stage_mark("diagnosis done");
  // The replays' graphs are report's last peak: the analyses' freed memory goes back first.
  return_free_memory();
  stage_mark("free memory returned");
  d.next_actions = advise(advice);
  stage_mark("advice done");
  if (d.diagnosis.empty()) d.diagnosis.push_back(diagnosis_line::NothingStandsOut{});
  return d;
}

}  // namespace kernscope
