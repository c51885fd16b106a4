// analyze: nsys analyze's six CUDA rules and kernscope's LLM rules, with evidence and actions.
#include <algorithm>
#include <future>
#include <set>

#include "analyses/nsys/analyze.hpp"
#include "render/render_findings.hpp"
#include "kernscope/steps.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace analyze_runner {
namespace {

Result<AnalyzeOptions> rule_options(const Options& o) {
  AnalyzeOptions rules;
  rules.gap_ms = o.integer("gap");
  rules.utilization_threshold = static_cast<int>(o.integer("threshold"));
  rules.utilization_chunks = static_cast<int>(o.integer("chunks"));
  if (o.integer("rows") < 0) return make_error(ErrorCode::kInvalidArgument, "analyze: --rows must be 0 or more");
  rules.rows = static_cast<std::size_t>(o.integer("rows"));
  return validate(rules);
}

// -r RULE[,RULE...] (repeatable, as nsys analyze -r): the rules to report; empty: all.
Result<std::set<std::string>> chosen_rules(const Options& o) {
  std::set<std::string> chosen;
  for (const auto& value : o.list("rule")) {
    for (std::size_t from = 0; from <= value.size();) {
      const auto comma = std::min(value.find(',', from), value.size());
      const std::string name = value.substr(from, comma - from);
      from = comma + 1;
      if (name.empty()) continue;
      const auto& known = analyze_rules();
      if (std::none_of(known.begin(), known.end(), [&](const RuleInfo& r) { return r.name == name; })) {
        return make_error(ErrorCode::kInvalidArgument, "analyze: unknown rule '" + name + "' (analyze --help-rules lists them)");
      }
      chosen.insert(name);
    }
  }
  return chosen;
}

std::string rules_listing() {
  std::string text = "The rules of kernscope analyze (-r RULE[,RULE...] runs only those):\n\n";
  for (const auto& r : analyze_rules()) text += "  " + r.name + std::string(r.name.size() < 20 ? 20 - r.name.size() : 1, ' ') + r.summary + "\n";
  return text;
}

Result<Document> run(const Trace& trace, const Options& o, const Output&) {
  auto options = rule_options(o);
  if (!options) return std::unexpected(options.error());
  const auto chosen = chosen_rules(o);
  if (!chosen) return std::unexpected(chosen.error());
  // nsys's rules and the step analysis only read the trace: run them side by side.
  auto steps_job = std::async(std::launch::async, [&] { return analyze_steps(trace, OpRuleSet::builtin(), {}); });
  auto findings = std::make_shared<std::vector<Finding>>(run_nsys_rules(trace, *options));
  if (auto steps = steps_job.get()) {
    for (auto& f : run_llm_rules(trace, *steps, *options)) findings->push_back(std::move(f));
  }
  if (!chosen->empty()) std::erase_if(*findings, [&](const Finding& f) { return !chosen->contains(f.rule); });
  Document d;
  d.json_document = [findings](JsonWriter& json) { write_findings_json(json, *findings); };
  d.text = [findings, rows = options->rows](const std::vector<Table>&, const RenderOptions&) {
    std::string text;
    for (const auto& f : *findings) text += render_finding_console(f, rows);
    return text;
  };
  return d;
}

}  // namespace
}  // namespace analyze_runner

const AnalysisEntry& analyze_entry() {
  using namespace analyze_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "analyze",
          .summary = "Rule findings like `nsys analyze` (pageable/sync copies, syncs, GPU gaps, low utilisation)",
          .options = {{"gap", 0, OptionKind::kInteger, "500", "gpu_gaps: minimum idle time in ms"},
                      {"threshold", 0, OptionKind::kInteger, "50", "gpu_time_util: flag regions below this % in use"},
                      {"chunks", 0, OptionKind::kInteger, "30", "gpu_time_util: chunks per device and process"},
                      {"rows", 0, OptionKind::kInteger, "50", "evidence rows per rule"},
                      {"rule", 'r', OptionKind::kList, "",
                       "report only these rules, comma-separated or repeated (as nsys analyze -r; --help-rules lists them)"}},
          .formats = {"table", "json"},
          .time_unit = false,
          .filters = true,
          .shape = ResultShape::kDocument,
          .listings = {{"help-rules", rules_listing()}}},
      summary_columns_plan, run};
  return entry;
}

}  // namespace kernscope::session
