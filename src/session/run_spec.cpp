// spec: speculative decoding read from the trace: verify steps and their drafting,
// tokens proposed and accepted where the trace shows them, time per emitted token against plain
// decode, the verify's cost per position, and whether drafting is on the critical path.
#include <sstream>

#include "analyses/spec/spec.hpp"
#include "render/spec_render.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace: the session compiles as one unity unit (see run_moe.cpp).
namespace spec_runner {
namespace {

Result<AnalysisOutput> run(const Trace& trace, const Options&, const Output& output) {
  auto spec = analyze_spec(trace);
  if (!spec) return std::unexpected(spec.error());
  AnalysisOutput out;
  out.tables.push_back(spec_steps_table(*spec));
  if (output.frames()) return out;
  const Format format = output.table_format();
  const RenderOptions render_options{format, output.time_unit};
  std::ostringstream text;
  if (format == Format::kJson) {
    text << render_spec_json(*spec);
  } else if (!spec->present && format == Format::kTable) {
    text << "No speculative decoding in this trace: " << spec->evidence << ".\n";
  } else if (format == Format::kTable) {
    render(text, out.tables[0], render_options);
    text << render_spec_text(*spec);
  } else {
    RenderOptions csv = render_options;
    csv.header_when_empty = true;  // csv/tsv of a trace without speculation: the columns alone
    render(text, out.tables[0], csv);
  }
  out.text = text.str();
  return out;
}

}  // namespace
}  // namespace spec_runner

const AnalysisEntry& spec_entry() {
  using namespace spec_runner;
  static const AnalysisEntry entry{
      table_analysis("spec",
                     "Speculative decoding: verify steps and their drafting, tokens proposed and accepted, time per emitted "
                     "token against plain decode, the verify's cost per position, drafting on the critical path",
                     {}),
      plan_details<kKernelDetails>, run};
  return entry;
}

}  // namespace kernscope::session
