// moe: mixture-of-experts layers read from the trace (issue 31): kernels by MoE role, layers in
// forward order, dispatch/combine and what of it no compute hides, tokens per expert where the
// trace shows them.
#include <cmath>
#include <sstream>

#include "analyses/moe/perfect_router.hpp"
#include "analyses/trace_context.hpp"
#include "render/json_writer.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace moe_runner {
namespace {

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;
  open.detail_kinds = bit(EventKind::kKernels) | bit(EventKind::kNvtx);
  return open;
}

// The document: {"present", "evidence", "roles": [...], "layers": [{"layer", "experts":
// [{"expert", "tokens", "time_ns"}], "imbalance"}], "dispatch_combine": {...}, "tokens_per_expert",
// "perfect_router": {"step_ns", "predicted_step_ns", "saving_pct", "verdict"}}.
std::string moe_json(const MoeAnalysis& m) {
  JsonWriter json(0);
  json.begin_object().member("present", m.present).member("evidence", m.evidence).member("kernel_ns", m.kernel_ns);
  json.key("roles").begin_array();
  for (const auto& r : m.roles) {
    json.begin_object().member("role", std::string(moe_role_name(r.role))).member("kernels", r.kernels).member("time_ns", r.ns);
    json.member("share_pct", std::round(r.share * 10000) / 100).key("top_names").begin_array();
    for (const auto& [name, ns] : r.top_names) json.begin_object().member("name", name).member("time_ns", ns).end_object();
    json.end_array().end_object();
  }
  json.end_array().member("layers_from", m.layers_from).key("layers").begin_array();
  for (const auto& l : m.layers) {
    json.begin_object().member("layer", l.layer).member("invocations", l.invocations).key("time_ns").begin_object();
    for (int r = 0; r < kMoeRoles; ++r) json.member(std::string(moe_role_name(static_cast<MoeRole>(r))), l.ns[r]);
    json.end_object().key("experts").begin_array();
    for (const auto& e : l.experts) json.begin_object().member("expert", e.expert).member("tokens", e.tokens).member("time_ns", e.time_ns).end_object();
    json.end_array().key("imbalance");
    if (l.imbalance) json.value(*l.imbalance);
    else json.null();
    json.end_object();
  }
  json.end_array();
  json.key("dispatch_combine").begin_object().member("time_ns", m.dispatch_combine_ns).member("exposed_ns", m.dispatch_combine_exposed_ns).end_object();
  json.member("tokens_per_expert", m.tokens_per_expert);
  json.key("perfect_router").begin_object().member("estimated", m.perfect_router.estimated);
  const PerfectRouter& r = m.perfect_router;
  if (r.estimated) {
    json.member("step_ns", r.step_ns).member("predicted_step_ns", r.predicted_step_ns);
    json.member("saving_pct", r.saving_pct).member("verdict", r.verdict).member("group", r.group);
    json.key("model").begin_object().member("iterations", r.iterations).member("invocations", r.invocations);
    json.member("experts_hit", r.experts_hit).member("experts_even", r.experts_even).member("host_per_iteration_ns", r.host_per_iteration_ns);
    json.member("gpu_per_iteration_ns", r.gpu_per_iteration_ns).member("gpu_per_token_ns", r.gpu_per_token_ns).end_object();
  } else {
    json.member("why_not", m.perfect_router.why_not);
  }
  json.end_object().key("notes").begin_array();
  for (const auto& n : m.notes) json.value(n);
  json.end_array().end_object();
  return json.finish();
}

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  const TraceContext context(trace, *rules);
  auto steps = analyze_steps(context, step_options_of(o));
  if (!steps) return std::unexpected(steps.error());
  auto moe = analyze_moe_with_router(context, *steps, account_steps(context, *steps));
  if (!moe) return std::unexpected(moe.error());
  AnalysisOutput out;
  out.tables.push_back(moe_roles_table(*moe));
  out.tables.push_back(moe_layers_table(*moe));
  out.tables.push_back(moe_expert_steps_table(*moe));
  if (output.frames()) return out;  // empty tables where the trace has no MoE layers
  const Format format = output.table_format();
  const RenderOptions render_options{format, output.time_unit};
  std::ostringstream text;
  if (!moe->present && format == Format::kTable) {
    // The answer to the question asked, on stdout like every other answer; csv/tsv give the header.
    text << "No mixture-of-experts layers in this trace: " << moe->evidence << ".\n";
  } else if (format == Format::kJson) {
    text << moe_json(*moe);
  } else if (format == Format::kTable) {
    // The per-step rows are the csv's; the text shows the roles and layers.
    render(text, out.tables[0], render_options);
    render(text, out.tables[1], render_options);
    char line[256];
    std::snprintf(line, sizeof line, "\nDispatch/combine: %.3f ms on the GPU, %.3f ms of it with no other kernel running (exposed)\n",
                  static_cast<double>(moe->dispatch_combine_ns) / 1e6, static_cast<double>(moe->dispatch_combine_exposed_ns) / 1e6);
    text << "\nMoE from: " << moe->evidence << "\nLayers: " << moe->layers_from << line << "Tokens per expert: " << moe->tokens_per_expert
         << "\nPerfect router: " << (moe->perfect_router.estimated ? moe->perfect_router.verdict : "not estimated: " + moe->perfect_router.why_not)
         << "\n";
    for (const auto& n : moe->notes) text << "Note: " << n << "\n";
  } else {
    // CSV/TSV: one row per step, layer and expert where the trace shows tokens per expert, else
    // one per layer; a trace without layers gives the header alone, so a reader still gets the columns.
    const Table& rows = out.tables[2].rows.empty() ? out.tables[1] : out.tables[2];
    if (rows.rows.empty()) {
      const char delimiter = format == Format::kTsv ? '\t' : ',';
      for (std::size_t c = 0; c < rows.columns.size(); ++c) {
        text << (c ? std::string(1, delimiter) : "") << column_header(rows.columns[c], output.time_unit);
      }
      text << "\n";
    } else {
      render(text, rows, render_options);
    }
  }
  out.text = text.str();
  return out;
}

}  // namespace
}  // namespace moe_runner

const AnalysisEntry& moe_entry() {
  using namespace moe_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{.name = "moe",
                   .summary = "Mixture-of-experts layers: kernels by role (expert GEMMs, router, permute, dispatch/combine), "
                              "layers in forward order, exposed dispatch/combine, tokens per expert where the trace shows them",
                   .options = step_option_specs(),
                   .formats = {"table", "csv", "tsv", "json"},
                   .time_unit = true,
                   .filters = true,
                   .shape = ResultShape::kTables},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
