// `kernscope report` as text and JSON.
#include <algorithm>
#include <sstream>

#include "render/diagnosis_words.hpp"
#include "base/text_util.hpp"
#include "render/document_render.hpp"
#include "render/accounting_render.hpp"
#include "render/json_writer.hpp"
#include "render/notes_json.hpp"
#include "render/tracer_cost_render.hpp"
#include "render/advice_render.hpp"

namespace kernscope {
namespace {

using text::fixed;

// Long kernel names cut to 70 characters with an ellipsis: the report is one screen.
std::string short_name(std::string name) {
  if (name.size() > 70) name = name.substr(0, 69) + "\xE2\x80\xA6";
  return name;
}

void distribution(JsonWriter& json, const Distribution& x) {
  json.begin_object()
      .member("count", x.count)
      .member("p50_ns", x.p50)
      .member("p95_ns", x.p95)
      .member("p99_ns", x.p99)
      .member("max_ns", x.max)
      .member("mean_ns", x.mean)
      .end_object();
}

void class_shares(JsonWriter& json, const std::vector<ClassShare>& shares) {
  json.begin_array();
  for (const auto& c : shares) json.begin_object().member("class", c.op_class).member("ns", c.ns).member("share", c.share).end_object();
  json.end_array();
}

// With --model: each figure, then what it divides and where each number came from.
void speed_of_light_text(std::ostream& o, const Diagnosis& d) {
  if (d.speed_of_light.empty() && d.speed_of_light_notes.empty()) return;
  o << "\nSpeed of light (model config)\n";
  const SpeedOfLight* previous = nullptr;
  for (const auto& f : d.speed_of_light) {
    const bool bytes = f.work_unit == "B";
    o << "  " << f.name << ": " << text::percent(f.fraction) << " = " << (bytes ? fixed(f.work / 1e9, 3) + " GB" : fixed(f.work / 1e12, 3) + " TFLOP")
      << " / " << fixed(f.time_ns / 1e6, 3) << " ms / " << (bytes ? fixed(f.peak_per_s / 1e9, 0) + " GB/s" : fixed(f.peak_per_s / 1e12, 1) + " TFLOP/s")
      << "\n";
    // The same step's work and peak are said once: the next figure differs in its time only.
    if (!previous || previous->work_source != f.work_source) o << "    work: " << f.work_source << "\n";
    o << "    time: " << f.time_source << "\n";
    if (!previous || previous->peak_source != f.peak_source) o << "    peak: " << f.peak_source << "\n";
    previous = &f;
  }
  for (const auto& n : d.speed_of_light_notes) o << "  note: " << n.text << "\n";
}

}  // namespace

// One line: layers, each role's share of kernel time, exposed dispatch/combine, tokens per expert.
std::string moe_summary(const MoeAnalysis& m) {
  std::string line = m.layers.empty() ? "layers not told apart" : std::to_string(m.layers.size()) + " layers (from router invocations)";
  for (const auto& r : m.roles) line += "; " + std::string(moe_role_name(r.role)) + " " + fixed(r.share * 100, 1) + " %";
  line += " of kernel time";
  if (m.dispatch_combine_ns > 0) {
    line += "; dispatch/combine " + fixed(static_cast<double>(m.dispatch_combine_ns) / 1e6, 3) + " ms, " +
            fixed(static_cast<double>(m.dispatch_combine_exposed_ns) / 1e6, 3) + " ms of it exposed";
  }
  const MoeLayer* worst = most_skewed_layer(m);
  if (!worst) return line + "; tokens per expert not in this trace";
  return line + "; tokens per expert from record_shapes, imbalance (max/mean) up to " + fixed(*worst->imbalance, 2) + " (layer " +
         std::to_string(worst->layer) + ")";
}

std::string render_diagnosis_text(const Diagnosis& d) {
  std::ostringstream o;
  o << "kernscope report: " << d.trace;
  if (d.cut_short) o << " -- PARTIAL: " << *d.cut_short;  // said first: every figure below is of a part
  o << "\n\n";
  o << "What ran\n";
  std::string devices;
  for (const auto& x : d.devices) devices += (devices.empty() ? "" : ", ") + x;
  o << "  devices: " << (devices.empty() ? "unknown" : devices) << "; " << d.kernels << " kernels (" << fixed(d.gpu_kernel_ns / 1e6, 3)
    << " ms), " << d.api_calls << " CUDA API calls\n";
  if (!d.recording.empty()) o << "  recorded: " << d.recording << "\n";
  o << "  workload: " << workload_name(d.steps.workload.kind);
  for (std::size_t i = 0; i < d.steps.workload.evidence.size(); ++i) o << (i ? "; " : " (") << d.steps.workload.evidence[i];
  o << (d.steps.workload.evidence.empty() ? "" : ")") << "\n";
  o << "  steps: " << d.steps.steps.size() << " (" << d.steps.method << ")\n";
  if (d.moe) o << "  mixture of experts (kernscope moe): " << moe_summary(*d.moe) << "\n";
  // Where the steps' time goes comes first: it adds up, and the rest explains its parts.
  if (!d.accounting.phases.empty()) o << "  where the steps' time goes (account):\n" << render_accounting_summary(d.accounting, "    ");
  for (const auto& g : d.steps.groups) {
    // Host and GPU time both: a step whose GPU work outlives its range (a serving engine's prefill,
    // CUDA graphs) lasts its GPU span for the user, not its wall.
    o << "    " << g.name << " [" << phase_name(g.phase) << "] x" << g.wall.count << ": wall p50 " << fixed(g.wall.p50 / 1e6, 3)
      << " ms";
    if (g.gpu_span.count) o << ", GPU span p50 " << fixed(g.gpu_span.p50 / 1e6, 3) << " ms";
    o << ", kernels p50 " << fixed(g.kernel_ns.p50 / 1e6, 3) << " ms, GPU idle p50 " << fixed(g.idle_share_permille.p50 / 10, 1)
      << " %, launches p50 " << static_cast<std::int64_t>(g.launches.p50) << "\n";
  }
  if (d.steps.tpot.count) {
    const auto& w = d.steps.tpot;
    o << "  TPOT (per decode step, from the " << d.steps.tpot_from << "): p50 " << fixed(w.p50 / 1e6, 3) << " ms, p95 "
      << fixed(w.p95 / 1e6, 3) << " ms, p99 " << fixed(w.p99 / 1e6, 3) << " ms, max " << fixed(static_cast<double>(w.max) / 1e6, 3)
      << " ms\n";
  }
  if (d.steps.tpot_from != "GPU period" && d.steps.decode_gpu_period.count) {
    const auto& g = d.steps.decode_gpu_period;
    o << "  GPU period per decode step (end of one step's GPU work to the next's): p50 " << fixed(g.p50 / 1e6, 3) << " ms, p95 "
      << fixed(g.p95 / 1e6, 3) << " ms, max " << fixed(static_cast<double>(g.max) / 1e6, 3) << " ms\n";
  }
  if (d.steps.ttft.count) o << "  TTFT (prefill step, from its start until its first token reaches the host, else its host range or GPU work ends): " << fixed(d.steps.ttft.p50 / 1e6, 3) << " ms\n";
  for (const auto& n : d.steps.notes) o << "  note: " << n.text << "\n";
  for (const auto& line : tracer_cost_sentences(d.tracer_cost)) o << "  tracer: " << line << "\n";
  speed_of_light_text(o, d);
  // A section with nothing to show is left out, not printed as a bare heading (a trace without
  // kernels, a run where no rule fired).
  if (!d.top_kernels.empty()) o << "\nTop kernels (share of GPU kernel time)\n";
  for (const auto& [name, share] : d.top_kernels) o << "  " << fixed(share * 100, 1) << " %  " << short_name(name) << "\n";
  if (!d.ops.classes.empty()) {
    o << "\nOperation classes (all GPU time, incl. copies)\n ";
    for (std::size_t i = 0; i < d.ops.classes.size() && i < 8; ++i) {
      const auto& c = d.ops.classes[i];
      o << " " << c.op_class << " " << fixed(d.ops.total_ns ? 100.0 * static_cast<double>(c.total_ns) / static_cast<double>(d.ops.total_ns) : 0, 1) << " %;";
    }
    o << "\n";
  }
  auto phase_line = [&](const char* label, const std::vector<ClassShare>& classes) {
    if (classes.empty()) return;
    o << "  " << label << ":";
    for (std::size_t i = 0; i < classes.size() && i < 6; ++i) o << " " << classes[i].op_class << " " << text::percent(classes[i].share) << ";";
    o << "\n";
  };
  phase_line("decode kernels", d.decode_classes);
  phase_line("prefill kernels", d.prefill_classes);
  if (!d.kernel_tail.empty() || !d.api_tail.empty()) o << "\nTail anomalies (highest tail scores)\n";
  for (const auto& r : d.kernel_tail) {
    o << "  kernel  p50 " << fixed(r.p50_ns / 1e3, 1) << " us, max " << fixed(static_cast<double>(r.max_ns) / 1e3, 1) << " us (x"
      << fixed(r.max_over_p50, 1) << "), " << r.count << " calls  " << short_name(r.name) << "\n";
  }
  for (const auto& r : d.api_tail) {
    o << "  api     p50 " << fixed(r.p50_ns / 1e3, 1) << " us, max " << fixed(static_cast<double>(r.max_ns) / 1e3, 1) << " us (x"
      << fixed(r.max_over_p50, 1) << "), " << r.count << " calls  " << r.name << "\n";
  }
  if (std::any_of(d.findings.begin(), d.findings.end(), [](const auto& f) { return !f.skipped && f.count != 0; })) {
    o << "\nRule findings\n";
  }
  for (const auto& f : d.findings) {
    if (f.skipped || f.count == 0) continue;
    o << "  [" << f.severity << "] " << f.rule << ": " << f.evidence << "\n";
  }
  o << "\nDiagnosis\n";
  for (const auto& s : diagnosis_sentences(d.diagnosis)) o << "  - " << s << "\n";
  if (!d.next_actions.empty()) o << "\nNext actions\n";
  for (std::size_t i = 0; i < d.next_actions.size(); ++i) o << "  " << i + 1 << ". " << action_sentence(d.next_actions[i]) << "\n";
  return o.str();
}

// What an action's sentence rests on: the share and scope, then only the fields its kind fills.
static void write_action_facts(JsonWriter& json, const ActionFacts& f) {
  json.begin_object().member("share", f.share).key("scope").begin_array();
  for (const auto& g : f.scope) json.value(g);
  json.end_array();
  if (!f.parts.empty()) {
    json.key("parts").begin_array();
    for (const auto& [name, share] : f.parts) json.begin_object().member("name", name).member("share", share).end_object();
    json.end_array();
  }
  if (f.pageable_share > 0) json.member("pageable_share", f.pageable_share);
  if (f.kernels > 0) {
    json.member("roof", f.roof).member("roof_fraction", f.roof_fraction).member("tflop_per_s", f.tflop_per_s).member("gb_per_s", f.gb_per_s);
    json.member("kernels", f.kernels).member("kernel_ns", f.kernel_ns).member("ideal_ns", f.ideal_ns);
  }
  if (f.graph_launches > 0) json.member("graph_launches", f.graph_launches);
  if (!f.frame.empty()) json.member("frame", f.frame).member("frame_share", f.frame_share);
  if (!f.outer_frame.empty()) json.member("outer_frame", f.outer_frame).member("outer_share", f.outer_share);
  if (f.replay_only) json.member("replay_only", true);
  if (f.waited_calls > 0) json.member("waited_calls", f.waited_calls).member("waited_call", f.waited_call);
  if (!f.steps_method.empty()) json.member("steps_method", f.steps_method);
  if (f.api_calls >= 0) json.member("api_calls", f.api_calls);
  json.end_object();
}

void write_diagnosis_json(JsonWriter& json, const Diagnosis& d) {
  json.begin_object().member("schema", "kernscope.report/1").member("trace", d.trace);
  if (d.cut_short) json.member("partial", *d.cut_short);
  json.key("devices").begin_array();
  for (const auto& device : d.devices) json.value(device);
  json.end_array();
  json.key("workload").begin_object().member("kind", workload_name(d.steps.workload.kind)).key("evidence").begin_array();
  for (const auto& e : d.steps.workload.evidence) json.value(e);
  json.end_array().end_object();
  write_tracer_cost_json(json.key("tracer_cost"), d.tracer_cost);
  if (!d.recording.empty()) json.member("recording", d.recording);
  if (d.moe) {
    json.key("moe").begin_object().member("layers", static_cast<std::int64_t>(d.moe->layers.size())).key("roles").begin_object();
    for (const auto& r : d.moe->roles) json.member(std::string(moe_role_name(r.role)), r.ns);
    json.end_object().member("dispatch_combine_exposed_ns", d.moe->dispatch_combine_exposed_ns);
    json.member("tokens_per_expert", d.moe->tokens_per_expert).end_object();
  }
  json.member("kernels", d.kernels).member("api_calls", d.api_calls).member("gpu_kernel_ns", d.gpu_kernel_ns);
  json.key("speed_of_light").begin_object().key("figures").begin_array();
  for (const auto& f : d.speed_of_light) {
    json.begin_object()
        .member("name", f.name)
        .member("fraction", f.fraction)
        .member("work", f.work)
        .member("work_unit", f.work_unit)
        .member("time_ns", f.time_ns)
        .member("peak_per_s", f.peak_per_s)
        .member("work_source", f.work_source)
        .member("time_source", f.time_source)
        .member("peak_source", f.peak_source)
        .end_object();
  }
  json.end_array();
  write_notes_json(json.key("notes"), d.speed_of_light_notes);
  json.end_object();
  json.key("accounting");
  write_accounting_json(json, d.accounting);
  json.key("steps").begin_object().member("method", d.steps.method).member("count", d.steps.steps.size());
  json.key("decode_wall");
  distribution(json, d.steps.decode_wall);
  json.key("prefill_wall");
  distribution(json, d.steps.prefill_wall);
  json.key("decode_kernel");
  distribution(json, d.steps.decode_kernel_ns);
  json.key("decode_gpu_period");
  distribution(json, d.steps.decode_gpu_period);
  json.key("tpot");
  distribution(json, d.steps.tpot);
  json.member("tpot_from", d.steps.tpot_from);
  json.key("ttft");
  distribution(json, d.steps.ttft);
  // The values behind tpot and ttft, in step order (a request's TTFT each, to set beside a client's).
  for (const auto& [key, samples] : {std::pair{"tpot_samples_ns", &d.steps.tpot_samples}, {"ttft_samples_ns", &d.steps.ttft_samples}}) {
    json.key(key).begin_array();
    for (const auto v : *samples) json.value(v);
    json.end_array();
  }
  json.key("groups").begin_array();
  for (const auto& g : d.steps.groups) {
    json.begin_object().member("name", g.name).member("phase", phase_name(g.phase));
    for (const auto& [key, dist] : {std::pair{"wall", &g.wall}, {"kernel", &g.kernel_ns}, {"gpu_idle_permille", &g.idle_share_permille},
                                    {"launches", &g.launches}, {"gpu_span", &g.gpu_span}, {"gpu_period", &g.gpu_period}}) {
      json.key(key);
      distribution(json, *dist);
    }
    json.end_object();
  }
  json.end_array().end_object();
  json.key("classes").begin_array();
  for (const auto& c : d.ops.classes) {
    json.begin_object().member("class", c.op_class).member("total_ns", c.total_ns).member("instances", c.instances).end_object();
  }
  json.end_array();
  json.key("decode_classes");
  class_shares(json, d.decode_classes);
  json.key("prefill_classes");
  class_shares(json, d.prefill_classes);
  json.key("findings").begin_array();
  for (const auto& f : d.findings) {
    json.begin_object()
        .member("rule", f.rule)
        .member("severity", f.severity)
        .member("count", f.count)
        .member("evidence", f.skipped ? f.skip_reason : f.evidence)
        .member("action", f.action)
        .end_object();
  }
  json.end_array();
  json.key("diagnosis").begin_array();
  for (const auto& s : diagnosis_sentences(d.diagnosis)) json.value(s);
  json.end_array();
  // Each action as data (docs/interfaces.md), its sentence beside it.
  json.key("next_actions").begin_array();
  for (const auto& a : d.next_actions) {
    json.begin_object().member("kind", a.kind).member("part", a.part);
    json.key("change");
    if (a.change) json.value(*a.change); else json.null();
    json.key("time_ns");
    if (a.time_ns >= 0) json.value(a.time_ns); else json.null();
    json.key("predicted");
    if (a.predicted) {
      json.begin_object()
          .member("metric", a.predicted->metric)
          .member("from_ns", a.predicted->from_ns)
          .member("to_ns", a.predicted->to_ns)
          .member("basis", a.predicted->basis)
          .member("source", a.predicted->source)
          .end_object();
    } else {
      json.null();
    }
    json.key("why_not_predicted");
    if (a.predicted) json.null(); else json.value(a.why_not_predicted);
    json.key("evidence").begin_array();
    for (const auto& e : a.evidence) json.value(e);
    json.end_array();
    write_action_facts(json.key("facts"), a.facts);
    json.member("rank_ns", a.rank_ns).member("rank_basis", a.rank_basis).member("text", action_sentence(a)).end_object();
  }
  json.end_array();
  json.end_object();
}

std::string render_diagnosis_json(const Diagnosis& d) {
  JsonWriter json;
  write_diagnosis_json(json, d);
  return json.finish();
}

}  // namespace kernscope
