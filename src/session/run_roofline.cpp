// roofline: speed of light per kernel, class or step (src/analyses/work/roofline.hpp).

#include <sstream>

#include "analyses/work/roofline.hpp"
#include "render/html/roofline_page.hpp"
#include "render/roofline_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace roofline_runner {
namespace {

Result<OpenOptions> plan(const Options&) {
  OpenOptions open;  // every kind, every column: steps need API calls and NVTX, shapes the kernels' External id
  return open;
}

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto grouping = parse_roofline_grouping(o.text("by"));
  if (!grouping) return std::unexpected(grouping.error());
  if (o.integer("limit") < 0) return make_error(ErrorCode::kInvalidArgument, "roofline: --limit must be 0 or more");
  auto user_peaks = read_gpu_peaks_file(o.text("peaks"));
  if (!user_peaks) return std::unexpected(user_peaks.error());
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  RooflineOptions options;
  options.grouping = *grouping;
  options.user_peaks = std::move(*user_peaks);
  options.latency_floor_ns = o.number("latency-floor") * 1000;
  options.steps = step_options_of(o);
  options.rules = &*rules;
  for (const auto& provider : work_providers()) {
    for (const auto& spec : provider.options) options.provider_options[spec.name] = o.text(spec.name);
  }
  auto analysed = roofline(trace, options);
  if (!analysed) return std::unexpected(analysed.error());
  auto result = std::make_shared<const RooflineResult>(std::move(*analysed));
  Document d;
  d.tables.push_back(roofline_table(*result, static_cast<std::size_t>(o.integer("limit"))));
  for (const auto& note : roofline_notes(*result)) d.notes.push_back(note_from("roofline: ", note));
  d.json = [result](const std::vector<Table>& tables, const RenderOptions& r) { return render_roofline_json(*result, tables[0], r); };
  d.text = [result](const std::vector<Table>& tables, const RenderOptions& r) { return render_roofline_text(*result, tables[0], r); };
  d.own_formats["html"] = [result, path = trace.source.path](const std::vector<Table>&, const RenderOptions&) {
    return render_roofline_html(*result, path);  // the notes are on the page
  };
  return d;
}

std::vector<OptionSpec> roofline_options() {
  std::vector<OptionSpec> options = {
      {"by", 0, OptionKind::kText, "kernel", "rows per kernel name, operation class or step"},
      {"peaks", 0, OptionKind::kText, "", "TSV of GPU peaks (the layout of data/gpu_peaks.tsv), tried before the built-in table"},
      {"latency-floor", 0, OptionKind::kNumber, "2", "us: a kernel with less ideal work per launch is bound by latency/launch"},
      {"limit", 0, OptionKind::kInteger, "20", "rows (0: all)"}};
  for (auto& spec : step_option_specs()) options.push_back(std::move(spec));
  for (const auto& provider : work_providers()) {
    for (const auto& spec : provider.options) options.push_back(spec);
  }
  return options;
}

}  // namespace
}  // namespace roofline_runner

const AnalysisEntry& roofline_entry() {
  using namespace roofline_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "roofline",
          .summary = "Speed of light: per kernel, class or step the achieved TFLOP/s and GB/s against the GPU's dense peaks, "
                     "the binding roof (memory, compute, latency), ideal and recoverable time; decode MBU and prefill MFU. "
                     "FLOPs and bytes from PyTorch's recorded shapes (Kineto record_shapes, emit_nvtx sizes)",
          .options = roofline_options(),
          .formats = table_formats_and({"html"}),
          .time_unit = false,
          .filters = true,
          .shape = ResultShape::kTables,
          .trace_option = "ncu"},
      plan, run};
  return entry;
}

}  // namespace kernscope::session
