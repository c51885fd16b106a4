// `kernscope NAME` for every analysis in the library's registry: options, formats and help text
// come from the registry row, so the CLI has no per-analysis code.
#include <chrono>
#include <cstdlib>
#include <algorithm>
#include <iostream>
#include <memory>

#include "base/stage_clock.hpp"
#include "commands.hpp"
#include "kernscope/analysis.hpp"

namespace kernscope::cli {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

// What CLI11 fills in for one subcommand, turned into an AnalysisRequest when it runs.
struct Parsed {
  std::string trace;
  std::vector<std::string> traces;  // analyses over several traces
  std::string format, time_unit, filter_time, filter_nvtx;
  std::map<std::string, std::vector<std::string>> values;  // the analysis's own options
  std::map<std::string, bool> flags;
  std::map<std::string, bool> listings;  // --help-reports and the like: print the list, read no trace
  bool partial = false;
};

std::string option_names(const OptionSpec& o) {
  std::string names = "--" + o.name;
  if (o.short_name) names = std::string("-") + o.short_name + "," + names;
  return names;
}

int run(const AnalysisSpec& spec, const Parsed& p) {
  for (const auto& [flag, text] : spec.listings) {
    if (p.listings.at(flag)) {
      std::cout << text;
      std::cout.flush();
      return std::cout ? 0 : fail(Error{ErrorCode::kIo, "cannot write to standard output"});
    }
  }
  AnalysisRequest request;
  request.analysis = spec.name;
  request.format = p.format;
  request.time_unit = p.time_unit;
  request.filter_time = p.filter_time;
  request.filter_nvtx = p.filter_nvtx;
  request.partial = p.partial;
  for (const auto& [name, values] : p.values) {
    if (!values.empty()) request.options[name] = values;
  }
  for (const auto& [name, set] : p.flags) {
    if (set) request.options[name] = {};
  }
  Result<AnalysisOutput> output;
  if (spec.reads_several_traces()) {
    auto groups = trace_path_groups(spec, p.traces, request.options);
    if (!groups) return fail(groups.error());
    output = run_analysis(*groups, request);
  } else {
    std::string path = p.trace;
    if (path.empty() && !spec.trace_option.empty() && request.options.contains(spec.trace_option)) {
      path = request.options.at(spec.trace_option).front();
    }
    if (path.empty()) {
      return fail(Error{ErrorCode::kInvalidArgument, spec.name + ": no trace given (a trace file" +
                                                         (spec.trace_option.empty() ? "" : ", or --" + spec.trace_option + " FILE") + ")"});
    }
    // KERNSCOPE_PHASE_TIMES=1: the wall time of reading and of the analysis with its output, on
    // standard error (bench/gpu/report_phases.sh weighs analyses apart from the reading this way).
    const bool phase_times = stage_clock_on();
    const auto started = std::chrono::steady_clock::now();
    stage_mark("start");
    auto trace = open_for_analysis(path, request);
    if (!trace) return fail(trace.error());
    const Trace& loaded = keep_until_exit(std::move(*trace));
    const auto read = std::chrono::steady_clock::now();
    stage_mark("read done");
    output = run_analysis(loaded, request);
    stage_mark("analysis done");
    if (phase_times) {
      const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
      std::cerr << "kernscope: phase times: read " << seconds(started, read) << " s, analysis and output "
                << seconds(read, std::chrono::steady_clock::now()) << " s\n";
    }
  }
  if (!output) return fail(output.error());
  for (const auto& m : output->messages) std::cerr << "kernscope: " << m << '\n';
  std::cout << output->text;
  std::cout.flush();
  if (!std::cout) return fail(Error{ErrorCode::kIo, "cannot write to standard output"});
  return output->exit_code;
}

}  // namespace

bool& quiet_flag() {
  static bool quiet = false;
  return quiet;
}

Command add_analysis(CLI::App& app, const AnalysisSpec& spec) {
  auto p = std::make_shared<Parsed>();
  auto* cmd = app.add_subcommand(spec.name, spec.summary);
  cmd->add_flag("-q,--quiet", quiet_flag(), "no progress line on standard error");
  cmd->add_flag("--partial", p->partial,
                "read a trace cut short (a profiler killed while writing, a broken copy) up to its last whole event; "
                "without it, that is an error");
  for (const auto& o : spec.options) {
    std::string help = o.help;
    if (o.kind == OptionKind::kFlag) {
      cmd->add_flag(option_names(o), p->flags[o.name], help);
      continue;
    }
    if (!o.default_value.empty()) help += " [default: " + o.default_value + "]";
    auto* option = o.kind == OptionKind::kList ? cmd->add_option(option_names(o), p->values[o.name], help)
                                               : cmd->add_option(option_names(o), p->values[o.name], help)->expected(1);
    // One value per occurrence (`--fail-if X A B`: A and B are traces), except an option naming a
    // group of traces (`--a a1 a2 a3`).
    const auto& groups = spec.trace_group_options;
    if (std::find(groups.begin(), groups.end(), o.name) == groups.end()) option->allow_extra_args(false);
    if (o.required) option->required();
  }
  for (const auto& [flag, text] : spec.listings) cmd->add_flag("--" + flag, p->listings[flag], "list them and exit (no trace needed)");
  cmd->add_option("-f,--format", p->format, joined(spec.formats) + " [default: " + spec.formats.front() + "]");
  if (spec.time_unit) cmd->add_option("--timeunit", p->time_unit, "ns, us, ms or s [default: ns]");
  if (spec.filters) {
    cmd->add_option("--filter-time", p->filter_time,
                    "[START]/[END] with units ns us ms s m h (e.g. 1s2ms/3s): keep events overlapping it");
    cmd->add_option("--filter-nvtx", p->filter_nvtx, "RANGE[@DOMAIN][/INDEX]: keep events overlapping that NVTX range instance");
  }
  if (spec.reads_several_traces()) {
    cmd->add_option("traces", p->traces, spec.trace_help);  // counted by trace_path_groups
  } else {
    auto* trace = cmd->add_option("trace", p->trace, spec.trace_help);
    // An analysis that can read its trace from one of its options takes the file either way.
    // An analysis with listings (stats --help-reports) runs without one: run() says when it is missing.
    if (spec.trace_option.empty() && spec.listings.empty()) trace->required();
  }
  return [&spec, p] { return run(spec, *p); };
}

}  // namespace kernscope::cli
