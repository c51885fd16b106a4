#include "render/moe_render.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope {

// The document: {"present", "evidence", "roles": [...], "layers": [{"layer", "experts":
// [{"expert", "tokens", "time_ns"}], "imbalance"}], "dispatch_combine": {...}, "tokens_per_expert",
// "perfect_router": {"step_ns", "predicted_step_ns", "saving_pct", "verdict"}}.
std::string render_moe_json(const MoeAnalysis& m) {
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
  json.end_object();
  write_notes_json(json.key("notes"), m.notes);
  json.end_object();
  return json.finish();
}

std::string render_moe_text(const MoeAnalysis& m) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "\nDispatch/combine: %.3f ms on the GPU, %.3f ms of it with no other kernel running (exposed)\n",
                static_cast<double>(m.dispatch_combine_ns) / 1e6, static_cast<double>(m.dispatch_combine_exposed_ns) / 1e6);
  out << "\nMoE from: " << m.evidence << "\nLayers: " << m.layers_from << line << "Tokens per expert: " << m.tokens_per_expert
       << "\nPerfect router: " << (m.perfect_router.estimated ? m.perfect_router.verdict : "not estimated: " + m.perfect_router.why_not)
       << "\n";
  for (const auto& n : m.notes) out << "Note: " << n.text << "\n";
  return out.str();
}

}  // namespace kernscope
