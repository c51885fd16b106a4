// report: one screen — what ran, where time goes, what is wrong, what to do next (text, JSON, or
// one self-contained HTML page with charts).

#include "analyses/work/model_cost_report.hpp"
#include "analyses/steps/tracer_cost.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "render/document_render.hpp"
#include "analyses/diagnosis/report_page_data.hpp"
#include "render/html/report_page.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace report_runner {
namespace {

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  const StepOptions steps = step_options_of(o);
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  auto diagnosed = diagnose(trace, *rules, steps, AnalyzeOptions{});
  if (!diagnosed) return std::unexpected(diagnosed.error());
  auto d = std::make_shared<Diagnosis>(std::move(*diagnosed));
  d->tracer_cost = estimate_tracer_cost(trace, &d->steps, builtin_tracer_cost_calibration());
  ModelOptionValues model;
  for (const auto& spec : model_option_specs()) model[spec.name] = o.text(spec.name);
  if (!o.text("peaks").empty() && o.text("model").empty()) {
    return make_error(ErrorCode::kInvalidArgument, "report: --peaks needs --model (the peaks divide the model's bytes and FLOPs)");
  }
  auto user_peaks = read_gpu_peaks_file(o.text("peaks"));
  if (!user_peaks) return std::unexpected(user_peaks.error());
  if (auto ok = add_speed_of_light(trace, model, *user_peaks, *d); !ok) return std::unexpected(ok.error());
  Document document;
  document.json_document = [d](JsonWriter& json) { write_diagnosis_json(json, *d); };
  document.text = [d](const std::vector<Table>&, const RenderOptions&) { return render_diagnosis_text(*d); };
  // The trace outlives the document's writing (the registry holds it).
  document.own_formats["html"] = [d, &trace](const std::vector<Table>&, const RenderOptions&) { return render_diagnosis_html(trace, *d, report_page_data(trace, *d)); };
  return document;
}

std::vector<OptionSpec> report_options() {
  auto options = step_option_specs();
  for (auto& spec : model_option_specs()) options.push_back(std::move(spec));
  options.push_back({"peaks", 0, OptionKind::kText, "",
                     "with --model: TSV of GPU peaks (data/gpu_peaks.tsv's layout, e.g. from kernscope peaks), tried before the built-in table"});
  return options;
}

}  // namespace
}  // namespace report_runner

const AnalysisEntry& report_entry() {
  using namespace report_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "report",
          .summary = "One-screen diagnosis: phases, steps, classes, tails, findings, next actions",
          .options = report_options(),
          .formats = {"text", "json", "html"},
          .time_unit = false,
          .filters = true,
          .shape = ResultShape::kDocument},
      summary_columns_plan, run};
  return entry;
}

}  // namespace kernscope::session
