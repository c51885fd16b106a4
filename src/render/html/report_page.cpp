#include "render/diagnosis_words.hpp"
#include "render/advice_render.hpp"
#include "render/html/report_page.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "analyses/steps/host_profile.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/tail.hpp"
#include "render/html/bar_chart.hpp"
#include "render/html/distribution.hpp"
#include "render/html/flame_chart.hpp"
#include "render/html/html_text.hpp"
#include "render/html/page.hpp"
#include "render/html/share_chart.hpp"
#include "render/html/step_chart.hpp"
#include "render/html/table.hpp"

namespace kernscope {
namespace {

using namespace html;

constexpr std::size_t kKernelTableRows = 50;
constexpr std::size_t kStepTableRows = 5000;
constexpr std::size_t kFlameGroups = 8;  // groups of steps drawn as flame graphs, in order of first step

std::string phase_color(Phase phase) {
  switch (phase) {
    case Phase::kPrefill: return "#f28e2b";
    case Phase::kDecode: return "#4e79a7";
    case Phase::kMixed: return "#b07aa1";
    case Phase::kUnknown: break;
  }
  return "#76b7b2";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// The steady steps (the leading process's last group of each phase, the ones TPOT and TTFT are read
// from): the accounting's one definition (step_accounting.hpp). Earlier groups (a warm-up, a first
// measured pass) stay out of the step charts and tiles so that one 400 ms warm-up step does not
// flatten the decode steps; tables list every step.
std::vector<bool> steady_steps(const Diagnosis& d) {
  if (d.accounting.steady_step.size() == d.steps.steps.size()) return d.accounting.steady_step;
  return std::vector<bool>(d.steps.steps.size(), false);
}

// Names of the groups left out of the steady state, with their step counts.
std::string left_out_groups(const StepAnalysis& steps, const std::vector<bool>& steady) {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < steps.steps.size(); ++i) {
    if (!steady[i]) ++out[steps.steps[i].group + " [" + std::string(phase_name(steps.steps[i].phase)) + "]"];
  }
  std::string text;
  for (const auto& [name, n] : out) text += (text.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  return text;
}

constexpr const char* kCategoryColors[kTimeCategories] = {"#59a14f", "#b07aa1", "#f28e2b", "#4e79a7", "#e15759", "#bab0ac"};

ShareRow account_row(const std::string& label, const TimeAccount& t) {
  ShareRow r{label, {}};
  for (const TimeCategory c : kAllTimeCategories) {
    const double share = t.window_ns > 0 ? static_cast<double>(t.at(c)) / static_cast<double>(t.window_ns) : 0.0;
    r.segments.push_back({std::string(category_name(c)), share, kCategoryColors[static_cast<std::size_t>(c)]});
  }
  return r;
}

// The page's answer, on its first screen: what the trace is, TTFT/TPOT, where the steps' time goes
// (one 100 % bar per phase), and the ranked actions with what the replay predicts they save; then
// the diagnosis behind them. Every tile is over the steady steps TPOT is read from.
std::string headline(const Diagnosis& d, Page& page) {
  page.subtitle("Trace: " + d.trace);
  std::vector<std::string> devices;
  for (const auto& name : d.devices) {
    if (!name.empty()) devices.push_back(name);
  }
  page.subtitle("Devices: " + (devices.empty() ? std::string("not named in the trace") : joined(devices, ", ")));
  page.subtitle(std::to_string(d.kernels) + " kernels (" + duration(static_cast<double>(d.gpu_kernel_ns)) + " of kernel time), " +
                std::to_string(d.api_calls) + " CUDA API calls");
  const auto& w = d.steps.workload;
  page.subtitle("Workload: " + std::string(workload_name(w.kind)) + (w.evidence.empty() ? "" : " (" + joined(w.evidence, "; ") + ")"));
  const std::vector<bool> steady = steady_steps(d);
  // GPU idle over the steady steps, from the accounting where there is one (the share of each
  // step's window in which no GPU operation runs: host, blocked and idle), so the tile agrees with
  // the bar below it; else from the steps' busy time.
  const StepAccounting& accounting = d.accounting;
  std::int64_t wall = 0, idle = 0, counted = 0;
  for (std::size_t i = 0; i < d.steps.steps.size(); ++i) {
    if (!steady[i]) continue;
    ++counted;
    if (i < accounting.steps.size()) {
      const TimeAccount& t = accounting.steps[i];
      wall += t.window_ns;
      idle += t.at(TimeCategory::kHost) + t.at(TimeCategory::kBlocked) + t.at(TimeCategory::kIdle);
    } else {
      wall += d.steps.steps[i].wall_ns;
      idle += d.steps.steps[i].gpu_idle_ns;
    }
  }
  std::vector<std::pair<std::string, std::string>> figures = {{"workload", std::string(workload_name(w.kind))},
                                                              {"steps", std::to_string(d.steps.steps.size())}};
  if (d.steps.ttft.count) figures.push_back({"TTFT", duration(d.steps.ttft.p50)});
  if (d.steps.tpot.count) {
    figures.push_back({"TPOT p50 (" + d.steps.tpot_from + ")", duration(d.steps.tpot.p50)});
    figures.push_back({"TPOT p99", duration(d.steps.tpot.p99)});
  }
  if (wall > 0) figures.push_back({"GPU idle in the " + std::to_string(counted) + " steady steps", percent(static_cast<double>(idle) / static_cast<double>(wall))});
  figures.push_back({"GPU kernel time", duration(static_cast<double>(d.gpu_kernel_ns))});
  std::string body = cards(figures);
  const StepAccounting& a = accounting;
  if (!a.steps.empty()) {
    // The steady groups' bars (the steps the tiles are over); every group's are in the section below.
    std::map<Phase, std::string> last_group;
    for (const auto& g : d.steps.groups) last_group[g.phase] = g.name;
    std::vector<ShareRow> rows;
    for (const auto& g : a.groups) {
      const auto it = last_group.find(g.phase);
      if (it == last_group.end() || it->second != g.name) continue;
      rows.push_back(account_row(g.name + " [" + std::string(phase_name(g.phase)) + "] x" + std::to_string(g.steps), g.account));
    }
    if (rows.empty()) rows.push_back(account_row("all steps", a.loop));
    const std::string left_out = left_out_groups(d.steps, steady);
    body += figure(stacked_share_chart("chart-accounting-summary", "Where the steps' time goes", rows),
                   "Each bar is 100 % of its steps' time, split instant by instant: gpu, communication, copy, host (the GPU idle while "
                   "the host launches or runs framework code), blocked (waiting in a synchronization), idle (nothing recorded)" +
                       (left_out.empty() ? std::string(".") : "; the steady steps only (left out: " + left_out + ")."));
  }
  body += "<h3>Next actions</h3>" +
          (d.next_actions.empty() ? paragraph("None.", "note")
                                  : std::string("<ol class=\"actions\" id=\"actions\">") + [&] {
                                      std::string items;
                                      for (const auto& action : d.next_actions) items += "<li>" + escape(action_sentence(action)) + "</li>";
                                      return items;
                                    }() + "</ol>");
  body += "<h3>Diagnosis</h3>" + (d.diagnosis.empty() ? paragraph("Nothing to report.", "note") : bullet_list(diagnosis_sentences(d.diagnosis)));
  return body;
}

// Decode MBU / prefill MFU against the model the user named (report --model): only with --model.
std::string speed_of_light_section(const Diagnosis& d) {
  SortableTable table("table-speed-of-light", {{"Figure"}, {"Of peak (%)", true}, {"Work per step", true}, {"Step time", true},
                                               {"Peak", true}, {"Sources (work; time; peak)"}});
  for (const auto& x : d.speed_of_light) {
    const bool bytes = x.work_unit == "B";
    const std::string work = bytes ? fixed(x.work / 1e9, 3) + " GB" : fixed(x.work / 1e12, 3) + " TFLOP";
    const std::string peak = bytes ? fixed(x.peak_per_s / 1e9, 0) + " GB/s" : fixed(x.peak_per_s / 1e12, 1) + " TFLOP/s";
    table.add_row({text_cell(x.name), number_cell(x.fraction * 100, fixed(x.fraction * 100, 2)), number_cell(x.work, work),
                   duration_cell(x.time_ns), number_cell(x.peak_per_s, peak),
                   text_cell(x.work_source + "; " + x.time_source + "; " + x.peak_source)});
  }
  std::string body = table.size() ? table.finish() : std::string();
  if (!d.speed_of_light_notes.empty()) body += bullet_list(note_texts(d.speed_of_light_notes));
  return body;
}

// Where the steps' time goes (the accounting): one 100 % bar per group of steps (warm-up included,
// apart) and the loop, then every steady step's window stacked by category.
std::string accounting_section(const Diagnosis& d) {
  const StepAccounting& a = d.accounting;
  std::vector<ShareRow> rows;
  for (const auto& g : a.groups) rows.push_back(account_row(g.name + " [" + std::string(phase_name(g.phase)) + "] x" + std::to_string(g.steps), g.account));
  rows.push_back(account_row("all steps", a.loop));
  std::string body = figure(stacked_share_chart("chart-accounting-groups", "Where the steps' time goes, by group of steps", rows),
                            "Each bar is 100 % of its steps' time; the last is every step of the leading process.");
  const std::vector<bool> steady = steady_steps(d);
  std::vector<StepLayer> layers;
  for (const TimeCategory c : kAllTimeCategories) layers.push_back({std::string(category_name(c)), kCategoryColors[static_cast<std::size_t>(c)], {}});
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < a.steps.size() && i < d.steps.steps.size(); ++i) {
    if (!steady[i]) continue;
    const Step& s = d.steps.steps[i];
    labels.push_back(s.name + " [" + std::string(phase_name(s.phase)) + "]");
    for (const TimeCategory c : kAllTimeCategories) {
      layers[static_cast<std::size_t>(c)].values.push_back(static_cast<double>(a.steps[i].at(c)));
    }
  }
  const std::string left_out = left_out_groups(d.steps, steady);
  const auto ns = [](double v) { return duration(v); };
  body += figure(stacked_step_chart("chart-accounting-steps", "Where each step's time goes", labels, layers, ns),
                 "Each steady step's window stacked by category, steps in order" +
                     (left_out.empty() ? std::string(".") : "; left out: " + left_out + " (in the bars above)."));
  return body;
}

std::string steps_section(const Diagnosis& d) {
  const auto& steps = d.steps.steps;
  std::string body = paragraph("Steps found from " + d.steps.method + ".", "note");
  for (const auto& n : d.steps.notes) body += paragraph("Note: " + n.text, "note");
  if (steps.empty()) return body;
  const std::vector<bool> steady = steady_steps(d);
  const std::string left_out = left_out_groups(d.steps, steady);
  if (!left_out.empty()) {
    body += paragraph("The charts show the steady steps (the last group of each phase, those TPOT and TTFT are read from); left out: " +
                          left_out + ". The tables list every step.",
                      "note");
  }
  StepBars bars;
  StepLine span{"GPU span (first start to last end of the step's GPU work)", "#1b2a3a", {}};
  bool any_span = false;
  std::vector<Phase> phases;
  std::vector<const Step*> shown;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steady[i]) shown.push_back(&steps[i]);
  }
  for (const Step* step : shown) {
    const Step& s = *step;
    bars.values.push_back(static_cast<double>(s.wall_ns));
    bars.colors.push_back(phase_color(s.phase));
    bars.labels.push_back(s.name + " [" + std::string(phase_name(s.phase)) + "]");
    span.values.push_back(s.gpu_span_ns > 0 ? static_cast<double>(s.gpu_span_ns) : std::numeric_limits<double>::quiet_NaN());
    any_span = any_span || s.gpu_span_ns > 0;
    if (std::find(phases.begin(), phases.end(), s.phase) == phases.end()) phases.push_back(s.phase);
  }
  for (Phase p : phases) bars.legend.push_back({"wall: " + std::string(phase_name(p)), phase_color(p)});
  std::vector<StepLine> lines;
  if (any_span) lines.push_back(span);
  std::vector<StepReference> references;
  if (d.steps.tpot.count) references.push_back({"TPOT p50", "#e15759", d.steps.tpot.p50});
  const auto ns = [](double v) { return duration(v); };
  body += figure(step_bar_chart("chart-step-duration", "Duration of each step", bars, lines, references, ns),
                 "Wall time of each step in order, coloured by phase; the line is the step's GPU span" +
                     std::string(d.steps.tpot.count ? ", the red rule TPOT p50 (" + d.steps.tpot_from + ")." : "."));
  std::vector<StepLayer> layers = {{"GPU busy", "#59a14f", {}}, {"GPU idle", "#e15759", {}}};
  for (const Step* s : shown) {
    layers[0].values.push_back(static_cast<double>(s->gpu_busy_ns));
    layers[1].values.push_back(static_cast<double>(s->gpu_idle_ns));
  }
  body += figure(stacked_step_chart("chart-step-busy-idle", "GPU busy and idle time per step", bars.labels, layers, ns),
                 "Each step's wall split into GPU busy (any GPU operation of the process running) and GPU idle.");

  SortableTable groups("table-step-groups", {{"Steps"}, {"Phase"}, {"Count", true}, {"Wall p50", true}, {"Wall p99", true},
                                             {"Kernels p50", true}, {"GPU idle p50 (%)", true}, {"Launches p50", true},
                                             {"GPU period p50", true}});
  for (const auto& g : d.steps.groups) {
    groups.add_row({name_cell(g.name), text_cell(std::string(phase_name(g.phase))), number_cell(static_cast<double>(g.wall.count), std::to_string(g.wall.count)),
                    duration_cell(g.wall.p50), duration_cell(g.wall.p99), duration_cell(g.kernel_ns.p50),
                    number_cell(g.idle_share_permille.p50 / 10, fixed(g.idle_share_permille.p50 / 10, 1)),
                    number_cell(g.launches.p50, fixed(g.launches.p50, 0)), duration_cell(g.gpu_period.p50)});
  }
  body += "<h3>Step groups</h3>" + groups.finish();
  SortableTable table("table-steps", {{"#", true}, {"Step"}, {"Phase"}, {"Wall", true}, {"GPU busy", true}, {"GPU idle", true},
                                      {"GPU span", true}, {"Kernels", true}, {"Kernel time", true}, {"Launches", true}, {"Syncs", true}});
  for (std::size_t i = 0; i < steps.size() && i < kStepTableRows; ++i) {
    const auto& s = steps[i];
    const auto count = [](std::int64_t n) { return number_cell(static_cast<double>(n), std::to_string(n)); };
    table.add_row({count(static_cast<std::int64_t>(i + 1)), name_cell(s.name), text_cell(std::string(phase_name(s.phase))),
                   duration_cell(static_cast<double>(s.wall_ns)), duration_cell(static_cast<double>(s.gpu_busy_ns)),
                   duration_cell(static_cast<double>(s.gpu_idle_ns)), duration_cell(static_cast<double>(s.gpu_span_ns)), count(s.kernels),
                   duration_cell(static_cast<double>(s.kernel_ns)), count(s.launches), count(s.syncs)});
  }
  const std::string listed = steps.size() > kStepTableRows ? "the first " + std::to_string(kStepTableRows) + " of " : "";
  return body + collapsible("Every step (" + listed + std::to_string(steps.size()) + ")", table.finish());
}

std::string classes_section(const Diagnosis& d) {
  if (d.ops.classes.empty()) return paragraph("No GPU operations to classify.", "note");
  const double total = static_cast<double>(d.ops.total_ns);
  std::vector<Bar> bars;
  SortableTable table("table-classes", {{"Class"}, {"Time (%)", true}, {"Total time", true}, {"Instances", true}, {"Kernels", true}});
  for (const auto& c : d.ops.classes) {
    const double share = total > 0 ? static_cast<double>(c.total_ns) / total : 0;
    bars.push_back({c.op_class, share, class_color(c.op_class), percent(share) + "  " + duration(static_cast<double>(c.total_ns)),
                    c.op_class + ": " + percent(share) + ", " + duration(static_cast<double>(c.total_ns)) + ", " + std::to_string(c.instances) + " instances"});
    table.add_row({text_cell(c.op_class), number_cell(share * 100, fixed(share * 100, 1)), duration_cell(static_cast<double>(c.total_ns)),
                   number_cell(static_cast<double>(c.instances), std::to_string(c.instances)),
                   number_cell(static_cast<double>(c.kernels), std::to_string(c.kernels))});
  }
  std::string body = figure(horizontal_bar_chart("chart-classes", "GPU time by operation class", bars, [](double v) { return percent(v, 0); }),
                            "Share of all GPU time (kernels, copies and sets) by operation class; " + d.ops.phase_source + ".");
  std::vector<ShareRow> phases;
  for (const auto& [label, shares] : {std::pair{"decode", &d.decode_classes}, {"prefill", &d.prefill_classes}}) {
    if (shares->empty()) continue;
    ShareRow row{label, {}};
    for (const auto& s : *shares) row.segments.push_back({s.op_class, s.share, class_color(s.op_class)});
    phases.push_back(std::move(row));
  }
  if (!phases.empty()) {
    body += figure(stacked_share_chart("chart-classes-by-phase", "Kernel time by operation class in each phase", phases),
                   "How each phase's kernel time splits into operation classes.");
  }
  return body + table.finish();
}

std::string kernels_section(const Diagnosis& d, const ReportPageData& data) {
  const std::vector<TailRow>& by_total = d.kernel_tail_by_total;
  if (by_total.empty()) return paragraph("No kernels in this trace.", "note");
  const auto& rows = data.distributions;
  std::string body;
  if (!rows.empty()) {
    body += figure(tail_box_chart("chart-kernel-tails", "Duration distribution of the kernels with the most time", rows),
                   "The " + std::to_string(rows.size()) +
                       " kernels with the most GPU time, by total: box p25-p75, line from the shortest call to p99, p50 and p99 "
                       "ticks, the longest call as a red dot (log scale).");
    body += figure(histogram_grid("chart-kernel-histograms", "Histogram of each kernel's durations", rows),
                   "Each kernel's calls in 30 log-spaced bins from its shortest to its longest (bar height: square root of the "
                   "count, so a few slow calls stay visible).");
  }
  SortableTable table("table-kernels", {{"Kernel"}, {"Calls", true}, {"Total", true}, {"Share (%)", true}, {"Mean", true}, {"p50", true},
                                        {"p95", true}, {"p99", true}, {"Max", true}, {"Max/p50", true}, {"Flags"}});
  for (std::size_t i = 0; i < by_total.size() && i < kKernelTableRows; ++i) {
    const auto& r = by_total[i];
    table.add_row({name_cell(r.name), number_cell(static_cast<double>(r.count), std::to_string(r.count)),
                   duration_cell(static_cast<double>(r.total_ns)), number_cell(r.share_of_total * 100, fixed(r.share_of_total * 100, 1)),
                   duration_cell(r.mean_ns), duration_cell(r.p50_ns), duration_cell(r.p95_ns), duration_cell(r.p99_ns),
                   duration_cell(static_cast<double>(r.max_ns)), number_cell(r.max_over_p50, fixed(r.max_over_p50, 1)),
                   text_cell(joined(r.flags, ", "))});
  }
  const std::size_t shown = std::min(kKernelTableRows, by_total.size());
  return body + collapsible("Top kernels by total time (" + std::to_string(shown) + " of " + std::to_string(by_total.size()) + ")",
                            table.finish(), true);
}

std::string tails_section(const Diagnosis& d) {
  if (d.kernel_tail.empty() && d.api_tail.empty()) return paragraph("No kernel or API call whose longest call is twice its median or more.", "note");
  SortableTable table("table-tails", {{"Kind"}, {"Name"}, {"Calls", true}, {"p50", true}, {"p99", true}, {"Max", true}, {"Max/p50", true},
                                      {"Tail score", true}});
  for (const auto& [kind, rows] : {std::pair{"kernel", &d.kernel_tail}, {"api", &d.api_tail}}) {
    for (const auto& r : *rows) {
      table.add_row({text_cell(kind), name_cell(r.name), number_cell(static_cast<double>(r.count), std::to_string(r.count)),
                     duration_cell(r.p50_ns), duration_cell(r.p99_ns), duration_cell(static_cast<double>(r.max_ns)),
                     number_cell(r.max_over_p50, fixed(r.max_over_p50, 1)), number_cell(r.tail_score, fixed(r.tail_score / 1e6, 1) + " M")});
    }
  }
  return paragraph("Highest tail scores (max x log2(count + 1) x max(1, max/p50)): slow outliers that recur.", "note") + table.finish();
}

std::string findings_section(const Diagnosis& d) {
  SortableTable table("table-findings", {{"Severity"}, {"Rule"}, {"Count", true}, {"Evidence"}, {"Action"}});
  std::size_t skipped = 0, clean = 0;
  for (const auto& f : d.findings) {
    if (f.skipped) ++skipped;
    if (f.skipped || f.count == 0) {
      clean += f.skipped ? 0 : 1;
      continue;
    }
    table.add_row({text_cell(f.severity), text_cell(f.rule), number_cell(static_cast<double>(f.count), std::to_string(f.count)),
                   text_cell(f.evidence), text_cell(f.action)});
  }
  std::string body = table.size() ? table.finish() : paragraph("No rule found anything.", "note");
  return body + paragraph(std::to_string(clean) + " rules found nothing; " + std::to_string(skipped) + " could not run on this trace.", "note");
}

// Sampled host stacks (kernscope record --sample cpu, nsys --sample=cpu): a flame graph of the
// launching thread per group of steps, the same groups and frames as `kernscope host`.
std::string host_section(const Trace& trace, const HostProfile& host) {
  std::string body = paragraph("Thread " + std::to_string(tid_of(host.global_tid)) + (host.thread_name.empty() ? "" : " (" + host.thread_name + ")") +
                                   (host.thread_reason.empty() ? "" : ", " + host.thread_reason) + ": " +
                                   std::to_string(host.samples_total) + " samples; kernscope host gives the same stacks as tables, "
                                   "collapsed stacks and speedscope JSON.",
                               "note");
  std::size_t drawn = 0;
  for (const HostGroup& g : host.groups) {
    if (g.samples == 0) continue;
    if (drawn == kFlameGroups) {
      body += paragraph("Further groups of steps are not drawn (the first " + std::to_string(kFlameGroups) + " are).", "note");
      break;
    }
    const std::string label = g.name + " [" + std::string(phase_name(g.phase)) + "]";
    const FlameChart chart = host_flame_chart("chart-host-flame-" + std::to_string(drawn), "Sampled host stacks of " + label, trace, g);
    if (chart.svg.empty()) continue;
    ++drawn;
    std::string caption = label + ": " + std::to_string(g.samples) + " samples over " + std::to_string(g.steps) +
                          " steps. Each frame sits above its caller, its width the samples that hold it (the root: all of them); "
                          "hover a frame for its samples and host time per step.";
    if (chart.min_samples > 1) caption += " Frames of fewer than " + std::to_string(chart.min_samples) + " samples are too narrow to draw.";
    if (chart.deeper_left_out) caption += " Stacks deeper than the chart are cut.";
    body += figure(chart.svg, caption);
  }
  if (!host.notes.empty()) body += bullet_list(note_texts(host.notes));
  return body;
}

}  // namespace

std::string render_diagnosis_html(const Trace& trace, const Diagnosis& d, const ReportPageData& data) {
  Page page("kernscope report");
  const std::string summary = headline(d, page);
  page.section("summary", "Summary and next actions", summary);
  // The detail behind the answer, folded: the page reads in a few screens, each section a click away.
  if (!d.speed_of_light.empty() || !d.speed_of_light_notes.empty()) {
    page.section("speed-of-light", "Speed of light (model cost)", speed_of_light_section(d), true);
  }
  if (!d.accounting.steps.empty()) page.section("accounting", "Where the steps' time goes, step by step", accounting_section(d), true);
  page.section("steps", "Steps over time", steps_section(d), true);
  if (data.host) page.section("host", "Host stacks (sampled)", host_section(trace, *data.host), true);
  page.section("classes", "Operation classes", classes_section(d), true);
  page.section("kernels", "Kernel durations and their tails", kernels_section(d, data), true);
  page.section("tails", "Tail anomalies", tails_section(d), true);
  page.section("findings", "Rule findings", findings_section(d), true);
  return page.finish();
}

}  // namespace kernscope
