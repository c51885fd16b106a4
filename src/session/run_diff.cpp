// diff: what changed from trace A to trace B (per phase, class, kernel, NVTX range), the rows
// that explain most of it first, and the regression gate (--fail-if) for CI.
#include <sstream>

#include "analyses/diff/diff.hpp"
#include "analyses/diff/gate.hpp"
#include "render/diff_render.hpp"
#include "render/html/diff_page.hpp"
#include "session/analysis_entry.hpp"
#include "session/figures_plan.hpp"

namespace kernscope::session {
// A named namespace (not an anonymous one): the session compiles as one unity unit, where every
// runner's plan() and run() must have a name of its own.
namespace diff_runner {
namespace {

Result<OpenOptions> plan(const Options&) { return figures_plan(); }

Table gates_table(const std::vector<GateVerdict>& verdicts) {
  Table t;
  t.report = "diff_gates";
  t.title = "Regression gates";
  // Change and its interval are numbers in the unit the condition is written in (Change Unit:
  // "%" for a relative condition, "ns" for an absolute one), so a DataFrame gets numbers.
  t.columns = {{"Expression", Unit::kNone},  {"A", Unit::kDuration},          {"B", Unit::kDuration},
               {"Change", Unit::kNone},      {"Low", Unit::kNone},            {"High", Unit::kNone},
               {"Change Unit", Unit::kNone}, {"Noise From", Unit::kNone},     {"Holds", Unit::kNone},
               {"Beyond Noise", Unit::kNone}, {"Failed", Unit::kNone}};
  for (const auto& v : verdicts) {
    t.rows.push_back({v.condition.expression, round_to(v.a, 1), round_to(v.b, 1), round_to(v.change, 2), round_to(v.low, 2),
                      round_to(v.high, 2), std::string(v.condition.relative ? "%" : "ns"), v.noise_from,
                      std::string(v.holds ? "yes" : "no"), std::string(v.beyond_noise ? "yes" : "no"),
                      std::string(v.failed ? "yes" : "no")});
  }
  return t;
}

Result<Document> run_groups(const std::vector<TraceGroup>& groups, const Options& o, const Output&) {
  // Malformed gates are refused before any work.
  std::vector<GateCondition> conditions;
  for (const auto& expression : o.list("fail-if")) {
    auto c = parse_gate(expression);
    if (!c) return std::unexpected(c.error());
    conditions.push_back(std::move(*c));
  }
  if (o.integer("limit") < 0) return make_error(ErrorCode::kInvalidArgument, "diff: --limit must be 0 or more");
  BootstrapOptions bootstrap{o.integer("resamples"), static_cast<std::uint64_t>(o.integer("seed")), o.number("confidence")};
  if (bootstrap.resamples < 1) return make_error(ErrorCode::kInvalidArgument, "diff: --resamples must be 1 or more");
  if (!(bootstrap.confidence > 0 && bootstrap.confidence < 1)) {
    return make_error(ErrorCode::kInvalidArgument, "diff: --confidence must lie between 0 and 1 (e.g. 0.95)");
  }
  const std::string table_name = o.text("table");
  static const std::vector<std::string> table_names = {"phases", "classes", "kernels", "kernel-tails", "nvtx", "gates"};
  const auto named_table = std::find(table_names.begin(), table_names.end(), table_name);
  if (named_table == table_names.end()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "diff: unknown --table '" + table_name + "' (phases, classes, kernels, kernel-tails, nvtx or gates)");
  }
  auto rules = rules_with(o.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  std::string identity;
  auto sides = measure_groups(groups, *rules, identity);
  if (!sides) return std::unexpected(sides.error());
  // What the writers read, kept with them.
  struct Kept {
    std::vector<SideFigures> sides;
    DiffResult diff;
    std::vector<GateVerdict> verdicts;
  };
  auto kept = std::make_shared<Kept>();
  kept->sides = std::move(*sides);
  kept->diff = diff_sides(kept->sides[0], kept->sides[1], identity);
  for (const auto& c : conditions) {
    auto v = evaluate_gate(c, kept->sides[0], kept->sides[1], bootstrap);
    if (!v) return std::unexpected(v.error());
    kept->verdicts.push_back(std::move(*v));
  }

  Document d;
  for (const auto& v : kept->verdicts) d.exit_code = v.failed ? 1 : d.exit_code;
  d.tables = {diff_phase_table(kept->diff), diff_class_table(kept->diff), diff_kernel_table(kept->diff),
              diff_kernel_tail_table(kept->diff), diff_nvtx_table(kept->diff), gates_table(kept->verdicts)};
  d.bare_tables = {static_cast<std::size_t>(named_table - table_names.begin())};  // --table
  for (const auto& v : kept->verdicts) d.notes.push_back({v.failed ? "gate_failed" : "gate_passed", NoteSeverity::kInfo, "gate " + v.evidence});
  for (const auto& n : kept->diff.notes) d.notes.push_back(note_from("diff: ", n));
  const bool failed = d.exit_code == 1;
  d.json = [kept, bootstrap, failed](const std::vector<Table>& tables, const RenderOptions& r) {
    return render_diff_json(DiffDocument{kept->diff, kept->sides[0], kept->sides[1], tables, kept->verdicts, bootstrap, failed}, r);
  };
  d.text = [kept, bootstrap, failed, limit = static_cast<std::size_t>(o.integer("limit"))](const std::vector<Table>& tables,
                                                                                          const RenderOptions& r) {
    return render_diff_text(DiffDocument{kept->diff, kept->sides[0], kept->sides[1], tables, kept->verdicts, bootstrap, failed}, r, limit);
  };
  d.own_formats["html"] = [kept](const std::vector<Table>& tables, const RenderOptions&) { return render_diff_html(kept->diff, tables); };
  return d;
}

}  // namespace
}  // namespace diff_runner

const AnalysisEntry& diff_entry() {
  using namespace diff_runner;
  static const AnalysisEntry entry{
      AnalysisSpec{
          .name = "diff",
          .summary = "What changed from trace A to trace B: steps (TTFT, TPOT, GPU busy/idle, launch, sync), operation "
                     "classes, kernels (new and missing too), NVTX ranges, the rows that explain most of the change first; "
                     "--fail-if gates a regression past the runs' own noise (exit code 1)",
          .options = {{"a", 0, OptionKind::kList, "", "side A as several runs of one program (with --b; instead of A B)"},
                      {"b", 0, OptionKind::kList, "", "side B as several runs of one program"},
                      {"fail-if", 0, OptionKind::kList, "",
                       "exit 1 when this holds beyond the noise, e.g. \"tpot_p50 > +5%\", \"class:gemv > +10%\", "
                       "\"kernel:NAME > +2ms\" (grammar: docs/ci-gates.md)"},
                      {"table", 0, OptionKind::kText, "kernels",
                       "the table CSV/TSV writes: phases, classes, kernels, kernel-tails, nvtx or gates"},
                      {"limit", 0, OptionKind::kInteger, "20", "rows per table in the text output (0: all)"},
                      {"resamples", 0, OptionKind::kInteger, "2000", "bootstrap resamples for --fail-if"},
                      {"seed", 0, OptionKind::kInteger, "1", "bootstrap seed (the same seed gives the same verdict)"},
                      {"confidence", 0, OptionKind::kNumber, "0.95", "confidence of the interval of the change"},
                      {"rules", 0, OptionKind::kText, "", "extra CLASS<TAB>REGEX operation rules"}},
          .formats = table_formats_and({"html"}),
          .time_unit = true,
          .filters = true,
          .shape = ResultShape::kTables,
          .trace_help = "trace A, then trace B",
          .min_traces = 2,
          .max_traces = 2,
          .trace_group_options = {"a", "b"}},
      plan, nullptr, run_groups};
  return entry;
}

}  // namespace kernscope::session
