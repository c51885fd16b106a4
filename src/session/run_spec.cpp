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

Result<Document> run(const Trace& trace, const Options&, const Output&) {
  auto analysed = analyze_spec(trace);
  if (!analysed) return std::unexpected(analysed.error());
  auto spec = std::make_shared<const SpecAnalysis>(std::move(*analysed));
  Document d;
  d.tables.push_back(spec_steps_table(*spec));
  d.header_when_empty = true;  // csv/tsv of a trace without speculation: the columns alone
  d.json = [spec](const std::vector<Table>&, const RenderOptions&) { return render_spec_json(*spec); };
  d.text = [spec](const std::vector<Table>& tables, const RenderOptions& options) {
    if (!spec->present) return "No speculative decoding in this trace: " + spec->evidence + ".\n";
    std::ostringstream text;
    render(text, tables[0], options);
    text << render_spec_text(*spec);
    return text.str();
  };
  return d;
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
