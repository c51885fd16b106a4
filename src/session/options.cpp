#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "analyses/steps/analyze_steps.hpp"
#include "kernscope/op_classes.hpp"
#include "session/analysis_entry.hpp"

namespace kernscope::session {
namespace {

bool parses_integer(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parses_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

Result<void> Options::check(const AnalysisSpec& spec, const OptionValues& values) {
  for (const auto& [name, given] : values) {
    const OptionSpec* option = nullptr;
    for (const auto& o : spec.options) {
      if (o.name == name) option = &o;
    }
    if (!option) {
      return make_error(ErrorCode::kInvalidArgument, spec.name + ": unknown option '" + name + "'");
    }
    if (option->kind != OptionKind::kList && given.size() > 1) {
      return make_error(ErrorCode::kInvalidArgument, spec.name + ": option '" + name + "' takes one value");
    }
    for (const auto& v : given) {
      if (option->kind == OptionKind::kInteger && !parses_integer(v)) {
        return make_error(ErrorCode::kInvalidArgument, spec.name + ": --" + name + " needs a whole number, not '" + v + "'");
      }
      if (option->kind == OptionKind::kNumber && !parses_number(v)) {
        return make_error(ErrorCode::kInvalidArgument, spec.name + ": --" + name + " needs a number, not '" + v + "'");
      }
    }
  }
  return {};
}

const OptionSpec& Options::spec_of(const std::string& name) const {
  for (const auto& o : spec_.options) {
    if (o.name == name) return o;
  }
  // A runner asking for an option its spec lacks is a bug in that runner, found by the registry test.
  std::abort();
}

std::string Options::text(const std::string& name) const {
  const auto it = values_.find(name);
  if (it != values_.end() && !it->second.empty()) return it->second.front();
  return spec_of(name).default_value;
}

std::int64_t Options::integer(const std::string& name) const {
  const std::string t = text(name);
  std::int64_t value = 0;
  std::from_chars(t.data(), t.data() + t.size(), value);
  return value;
}

double Options::number(const std::string& name) const { return std::strtod(text(name).c_str(), nullptr); }

bool Options::flag(const std::string& name) const {
  (void)spec_of(name);
  const auto it = values_.find(name);
  if (it == values_.end()) return false;
  return it->second.empty() || (it->second.front() != "false" && it->second.front() != "0");
}

std::vector<std::string> Options::list(const std::string& name) const {
  (void)spec_of(name);
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

AnalysisSpec table_analysis(std::string name, std::string summary, std::vector<OptionSpec> options) {
  return AnalysisSpec{.name = std::move(name),
                      .summary = std::move(summary),
                      .options = std::move(options),
                      .formats = table_format_names(),
                      .time_unit = true,
                      .filters = true,
                      .shape = ResultShape::kTables};
}

Result<OpenOptions> summary_columns_plan(const Options&) {
  OpenOptions open;
  open.detail_kinds = kAllEventKinds & ~(bit(EventKind::kKernels) | bit(EventKind::kApiCalls));
  open.kernel_name_variants = false;  // analyze, host and report show demangled names only
  return open;
}

std::vector<OptionSpec> step_option_specs() {
  return {{"step-range", 0, OptionKind::kText, "", "NVTX range NAME[@DOMAIN] that marks one step"},
          {"rules", 0, OptionKind::kText, "", "extra CLASS<TAB>REGEX operation rules, tried before the built-in ones"}};
}

StepOptions step_options_of(const Options& o) {
  StepOptions options;
  if (!o.text("step-range").empty()) options.step_range = o.text("step-range");
  return options;
}

Result<OpRuleSet> rules_with(const std::string& user_rules_path) {
  if (user_rules_path.empty()) return OpRuleSet::builtin();
  std::ifstream in(user_rules_path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, user_rules_path + ": cannot read the rules file");
  std::ostringstream text;
  text << in.rdbuf();
  auto user = OpRuleSet::parse(text.str(), user_rules_path);
  if (!user) return std::unexpected(user.error());
  return OpRuleSet::combine(*user, OpRuleSet::builtin());
}

Result<std::unique_ptr<StepsOfRun>> steps_of_run(const Trace& trace, const Options& options) {
  auto out = std::make_unique<StepsOfRun>();
  auto rules = rules_with(options.text("rules"));
  if (!rules) return std::unexpected(rules.error());
  out->rules = std::move(*rules);
  out->context = std::make_unique<TraceContext>(trace, out->rules);
  auto steps = analyze_steps(*out->context, step_options_of(options));
  if (!steps) return std::unexpected(steps.error());
  out->steps = std::move(*steps);
  return out;
}

}  // namespace kernscope::session
