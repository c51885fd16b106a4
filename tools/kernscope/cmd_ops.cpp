// kernscope ops: GPU time by operation class (GEMM, attention, norm, ... communication).
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"

namespace kernscope::cli {
namespace {

struct OpsOptions {
  std::string trace;
  std::string rules;
  bool detail = false;
  std::string format = "table";
  std::string time_unit = "ns";
};

int run_ops(const OpsOptions& o) {
  auto format = parse_format(o.format);
  if (!format) return fail(format.error());
  auto unit = parse_time_unit(o.time_unit);
  if (!unit) return fail(unit.error());
  OpRuleSet rules = OpRuleSet::builtin();
  if (!o.rules.empty()) {
    std::ifstream in(o.rules, std::ios::binary);
    if (!in) return fail(Error{ErrorCode::kNotFound, o.rules + ": cannot read the rules file"});
    std::ostringstream text;
    text << in.rdbuf();
    auto user = OpRuleSet::parse(text.str(), o.rules);
    if (!user) return fail(user.error());
    rules = OpRuleSet::combine(*user, rules);
  }
  OpenOptions open_options;
  open_options.kinds = bit(EventKind::kKernels) | bit(EventKind::kMemcpy) | bit(EventKind::kMemset) |
                       bit(EventKind::kApiCalls) | bit(EventKind::kNvtx);
  open_options.detail_kinds = 0;
  auto trace = open_trace(o.trace, open_options);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  auto result = classify_operations(loaded, rules);
  if (!result) return fail(result.error());
  const RenderOptions render_options{*format, *unit};
  render(std::cout, ops_table(*result), render_options);
  if (o.detail) {
    if (*format != Format::kTable) std::cout << '\n';
    render(std::cout, ops_detail_table(*result), render_options);
  }
  if (*format == Format::kTable) {
    std::cout << "\nAttention phases from: " << result->phase_source << "; GPU time classed 'other': "
              << static_cast<int>(result->other_share * 1000 + 0.5) / 10.0 << " %\n";
  }
  return 0;
}

}  // namespace

Command add_ops(CLI::App& app) {
  auto o = std::make_shared<OpsOptions>();
  auto* cmd = app.add_subcommand("ops", "GPU time by operation class (GEMM, GEMV, attention, norm, RoPE, ...)");
  cmd->add_option("--rules", o->rules, "extra CLASS<TAB>REGEX rules, tried before the built-in ones");
  cmd->add_flag("--detail", o->detail, "also list every kernel name with its class and the rule that matched");
  cmd->add_option("-f,--format", o->format, "table, csv, tsv or json")->capture_default_str();
  cmd->add_option("--timeunit", o->time_unit, "ns, us, ms or s")->capture_default_str();
  cmd->add_option("trace", o->trace, "trace file")->required();
  return [o] { return run_ops(*o); };
}

}  // namespace kernscope::cli
