// report: one screen — what ran, where time goes, what is wrong, what to do next.
#include "analyses/model_cost_report.hpp"
#include "kernscope/diagnosis.hpp"
#include "render/document_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
namespace {

Result<AnalysisOutput> run(const Trace& trace, const Options& o, const Output& output) {
  const StepOptions steps = step_options_of(o);
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  auto d = diagnose(trace, *rules, steps, AnalyzeOptions{});
  if (!d) return std::unexpected(d.error());
  ModelOptionValues model;
  for (const auto& spec : model_option_specs()) model[spec.name] = o.text(spec.name);
  if (auto ok = add_speed_of_light(trace, model, std::nullopt, *d); !ok) return std::unexpected(ok.error());
  AnalysisOutput out;
  out.text = output.format == "json" ? render_diagnosis_json(*d) : render_diagnosis_text(*d);
  return out;
}

std::vector<OptionSpec> report_options() {
  auto options = step_option_specs();
  for (auto& spec : model_option_specs()) options.push_back(std::move(spec));
  return options;
}

}  // namespace

const AnalysisEntry& report_entry() {
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "report",
          .summary = "One-screen diagnosis: phases, steps, classes, tails, findings, next actions",
          .options = report_options(),
          .formats = {"text", "json"},
          .time_unit = false,
          .filters = true,
          .shape = ResultShape::kDocument},
      summary_columns_plan, run};
  return entry;
}

}  // namespace kernscope::session
