// The registry of analyses and the one path every front end takes through it: check the
// request, read what the analysis needs, filter, run, render.
#include <algorithm>
#include <fstream>
#include <memory>

#include "base/progress.hpp"
#include "ranks/ranks_set.hpp"
#include "render/json_writer.hpp"
#include "model/trace_filter.hpp"
#include "session/analysis_entry.hpp"
#include "session/document_writer.hpp"

namespace kernscope {
namespace {

using session::AnalysisEntry;

// The registry: one row per analysis, in the order `kernscope --help` lists them.
const std::vector<const AnalysisEntry*>& entries() {
  static const std::vector<const AnalysisEntry*> rows = {
      &session::stats_entry(),   &session::info_entry(),  &session::tail_entry(),   &session::ops_entry(),
      &session::analyze_entry(), &session::steps_entry(), &session::account_entry(), &session::moe_entry(), &session::spec_entry(), &session::whatif_entry(), &session::critical_path_entry(), &session::report_entry(), &session::export_entry(),
      &session::roofline_entry(),
      &session::host_entry(),
      &session::diff_entry(),    &session::compare_entry(),
      &session::ranks_entry(),
  };
  return rows;
}

// Every analysis that prints takes -o FILE, as nsys's commands do: its output is written there instead
// of standard output (one home for it: write_output below). An analysis whose own option is named
// "output" keeps its meaning (export writes the timeline itself, stats a file per report).
bool takes_generic_output(const AnalysisSpec& spec) {
  return std::none_of(spec.options.begin(), spec.options.end(), [](const OptionSpec& o) { return o.name == "output"; });
}

// Each entry's spec as the front ends see it: the entry's own, with -o where it takes the generic one.
const AnalysisSpec& spec_of(const AnalysisEntry* entry) {
  static const std::vector<AnalysisSpec> specs = [] {
    std::vector<AnalysisSpec> out;
    for (const auto* e : entries()) {
      AnalysisSpec spec = e->spec;
      spec.reads_paths = e->run_paths != nullptr;  // said by the entry, not by each spec again
      if (takes_generic_output(spec)) {
        spec.options.push_back({"output", 'o', OptionKind::kText, "",
                                "write the output to this file instead of standard output ('-': standard output)"});
      }
      out.push_back(std::move(spec));
    }
    return out;
  }();
  const auto& all = entries();
  return specs[static_cast<std::size_t>(std::find(all.begin(), all.end(), entry) - all.begin())];
}

const AnalysisEntry* find_entry(std::string_view name) {
  for (const auto* e : entries()) {
    if (e->spec.name == name) return e;
  }
  return nullptr;
}

// The one way out of every analysis: its document written in the format asked for (render/document.hpp),
// and with -o FILE (analyses without an output option of their own) the text written to FILE, a
// line on standard error saying so, and (for Python) a document of what was written instead of the text.
Result<AnalysisOutput> write_output(const AnalysisEntry* entry, const OptionValues& options, const session::Output& output,
                                    Result<Document> document) {
  if (!document) return std::unexpected(document.error());
  const std::string& format = output.format;
  auto out = write_document(std::move(*document), format, output.time_unit);
  if (!out || !takes_generic_output(entry->spec)) return out;
  const auto it = options.find("output");
  if (it == options.end() || it->second.empty() || it->second.front().empty() || it->second.front() == "-") return out;
  const std::string& path = it->second.front();
  if (format == kFramesFormat || format == kObjectFormat) {  // Python's tables or values: no text to write
    return make_error(ErrorCode::kInvalidArgument, entry->spec.name + ": output= writes the text of a format: give format= too");
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << out->text;
  file.close();
  if (!file) return make_error(ErrorCode::kIo, "cannot write " + path);
  out->messages.push_back("wrote " + path);
  JsonWriter json = JsonWriter::tree();
  json.begin_object().member("path", path).member("format", format).member("bytes", out->text.size()).end_object();
  out->summary = std::make_shared<const JsonValue>(json.take());
  out->text.clear();
  return out;
}

Result<const AnalysisEntry*> entry_for(const AnalysisRequest& request) {
  const auto* entry = find_entry(request.analysis);
  if (!entry) return make_error(ErrorCode::kInvalidArgument, "unknown analysis '" + request.analysis + "'");
  return entry;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

Result<session::Output> output_of(const AnalysisEntry& entry, const AnalysisRequest& request) {
  session::Output out;
  out.format = request.format.empty() ? entry.spec.formats.front() : request.format;
  const auto& formats = entry.spec.formats;
  const bool frames = out.format == kFramesFormat && entry.spec.shape == ResultShape::kTables;
  const bool object = out.format == kObjectFormat && entry.spec.shape == ResultShape::kDocument &&
                      std::find(formats.begin(), formats.end(), "json") != formats.end();
  if (!frames && !object && std::find(formats.begin(), formats.end(), out.format) == formats.end()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "unknown format '" + out.format + "' (expected " + joined(formats) + ")");
  }
  if (!request.time_unit.empty()) {
    if (!entry.spec.time_unit) {
      return make_error(ErrorCode::kInvalidArgument, entry.spec.name + " takes no time unit");
    }
    auto unit = parse_time_unit(request.time_unit);
    if (!unit) return std::unexpected(unit.error());
    out.time_unit = *unit;
  }
  return out;
}

Result<FilterSpec> filter_spec(const AnalysisEntry& entry, const AnalysisRequest& request) {
  FilterSpec spec;
  if (request.filter_time.empty() && request.filter_nvtx.empty()) return spec;
  if (!entry.spec.filters) return make_error(ErrorCode::kInvalidArgument, entry.spec.name + " takes no filters");
  if (!request.filter_time.empty()) {
    auto window = parse_time_window(request.filter_time);
    if (!window) return std::unexpected(window.error());
    spec.time = *window;
  }
  if (!request.filter_nvtx.empty()) spec.nvtx = request.filter_nvtx;
  return spec;
}

}  // namespace

const std::vector<AnalysisSpec>& analysis_specs() {
  static const std::vector<AnalysisSpec> specs = [] {
    std::vector<AnalysisSpec> out;
    for (const auto* e : entries()) out.push_back(spec_of(e));
    return out;
  }();
  return specs;
}

const AnalysisSpec* find_analysis(std::string_view name) {
  const auto* entry = find_entry(name);
  return entry ? &spec_of(entry) : nullptr;
}

Result<void> check_request(const AnalysisRequest& request) {
  auto entry = entry_for(request);
  if (!entry) return std::unexpected(entry.error());
  if (auto ok = session::Options::check(spec_of(*entry), request.options); !ok) return ok;
  for (const auto& option : (*entry)->spec.options) {
    if (option.required && !request.options.contains(option.name)) {
      return make_error(ErrorCode::kInvalidArgument, (*entry)->spec.name + ": --" + option.name + " is required");
    }
  }
  if (auto out = output_of(**entry, request); !out) return std::unexpected(out.error());
  if (auto spec = filter_spec(**entry, request); !spec) return std::unexpected(spec.error());
  return {};
}

Result<Trace> open_for_analysis(const std::string& path, const AnalysisRequest& request) {
  if (auto ok = check_request(request); !ok) return std::unexpected(ok.error());
  const auto* entry = *entry_for(request);
  const session::Options options(spec_of(entry), request.options);
  auto plan = entry->plan(options);
  if (!plan) return std::unexpected(plan.error());
  auto spec = *filter_spec(*entry, request);
  if (spec.nvtx) plan->kinds |= bit(EventKind::kNvtx);
  plan->partial = request.partial;
  auto trace = open_trace(path, *plan);
  if (!trace) return std::unexpected(trace.error());
  if (!spec.empty()) {
    auto filter = resolve_filter(*trace, spec);
    if (!filter) return std::unexpected(filter.error());
    apply_filter(*trace, *filter);
  }
  return trace;
}

Result<AnalysisOutput> run_analysis(const Trace& trace, const AnalysisRequest& request, bool apply_filters) {
  if (auto ok = check_request(request); !ok) return std::unexpected(ok.error());
  const auto* entry = *entry_for(request);
  if (!entry->run) return make_error(ErrorCode::kInvalidArgument, entry->spec.name + " reads several traces, not one");
  const session::Options options(spec_of(entry), request.options);
  const auto output = *output_of(*entry, request);
  const auto spec = *filter_spec(*entry, request);
  if (!apply_filters || spec.empty()) return write_output(entry, request.options, output, entry->run(trace, options, output));
  auto filter = resolve_filter(trace, spec);
  if (!filter) return std::unexpected(filter.error());
  auto copy = std::make_unique<Trace>(trace);
  apply_filter(*copy, *filter);
  return write_output(entry, request.options, output, entry->run(*copy, options, output));
}

Result<AnalysisOutput> run_analysis(const std::string& path, const AnalysisRequest& request) {
  auto trace = open_for_analysis(path, request);
  if (!trace) return std::unexpected(trace.error());
  return run_analysis(*trace, request);
}

// --- analyses over several traces ---------------------------------------------------------------

std::string trace_label(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const std::string_view ext : {".gz", ".xz", ".sqlite", ".json", ".nsys-rep", ".pt.trace"}) {
    if (name.size() > ext.size() && name.ends_with(ext)) name.resize(name.size() - ext.size());
  }
  return name;
}

Result<std::vector<std::vector<std::string>>> trace_path_groups(const AnalysisSpec& spec,
                                                                const std::vector<std::string>& positional,
                                                                const OptionValues& options) {
  std::vector<std::vector<std::string>> groups;
  std::size_t named = 0;
  for (const auto& name : spec.trace_group_options) named += options.contains(name) ? 1 : 0;
  if (named > 0) {
    if (named != spec.trace_group_options.size() || !positional.empty()) {
      std::string names;
      for (const auto& n : spec.trace_group_options) names += (names.empty() ? "--" : " and --") + n;
      return make_error(ErrorCode::kInvalidArgument,
                        spec.name + ": give the traces either as positional files or all with " + names + ", not mixed");
    }
    for (const auto& name : spec.trace_group_options) groups.push_back(options.at(name));
  } else {
    // A folder or a quoted glob pattern stands for its trace files, one trace each.
    for (const auto& argument : positional) {
      auto paths = ranks::expand_trace_arguments({argument}, true);
      if (!paths) return std::unexpected(paths.error());
      for (const auto& path : *paths) groups.push_back({path});
    }
  }
  const auto n = groups.size();
  if (n < spec.min_traces || (spec.max_traces != 0 && n > spec.max_traces)) {
    const std::string wanted = spec.min_traces == spec.max_traces ? std::to_string(spec.min_traces)
                               : spec.max_traces == 0             ? std::to_string(spec.min_traces) + " or more"
                                                                  : std::to_string(spec.min_traces) + " to " +
                                                                        std::to_string(spec.max_traces);
    return make_error(ErrorCode::kInvalidArgument,
                      spec.name + " reads " + wanted + " traces, got " + std::to_string(n));
  }
  for (const auto& group : groups) {
    if (group.empty()) return make_error(ErrorCode::kInvalidArgument, spec.name + ": an empty group of traces");
  }
  return groups;
}

Result<AnalysisOutput> run_analysis(const std::vector<TraceGroup>& groups, const AnalysisRequest& request,
                                    bool apply_filters) {
  if (auto ok = check_request(request); !ok) return std::unexpected(ok.error());
  const auto* entry = *entry_for(request);
  if (!entry->run_groups) return make_error(ErrorCode::kInvalidArgument, entry->spec.name + " reads one trace");
  const auto& spec = entry->spec;
  if (groups.size() < spec.min_traces || (spec.max_traces != 0 && groups.size() > spec.max_traces)) {
    return make_error(ErrorCode::kInvalidArgument,
                      spec.name + ": wrong number of traces (" + std::to_string(groups.size()) + ")");
  }
  const session::Options options(spec_of(entry), request.options);
  const auto output = *output_of(*entry, request);
  const auto filter = *filter_spec(*entry, request);
  if (!apply_filters || filter.empty()) return write_output(entry, request.options, output, entry->run_groups(groups, options, output));
  // Filters act on copies, as for one trace; the copies live until the analysis returns.
  std::vector<std::unique_ptr<Trace>> copies;
  std::vector<TraceGroup> filtered;
  for (const auto& group : groups) {
    TraceGroup g{group.label, {}};
    for (const auto* trace : group.runs) {
      auto resolved = resolve_filter(*trace, filter);
      if (!resolved) return std::unexpected(resolved.error());
      copies.push_back(std::make_unique<Trace>(*trace));
      apply_filter(*copies.back(), *resolved);
      g.runs.push_back(copies.back().get());
    }
    filtered.push_back(std::move(g));
  }
  return write_output(entry, request.options, output, entry->run_groups(filtered, options, output));
}

Result<AnalysisOutput> run_analysis(const std::vector<std::vector<std::string>>& path_groups,
                                    const AnalysisRequest& request) {
  if (auto ok = check_request(request); !ok) return std::unexpected(ok.error());
  if (const auto* entry = *entry_for(request); entry->run_paths) {
    // It reads the traces itself, one digest at a time (AnalysisEntry::run_paths); it has no filters.
    const session::Options options(spec_of(entry), request.options);
    const auto output = *output_of(*entry, request);
    return write_output(entry, request.options, output, entry->run_paths(path_groups, options, output));
  }
  std::vector<std::unique_ptr<Trace>> traces;
  std::vector<TraceGroup> groups;
  std::size_t files = 0;
  for (const auto& paths : path_groups) files += paths.size();
  progress::Meter meter("reading traces", "traces", files);
  for (const auto& paths : path_groups) {
    TraceGroup group;
    group.label = paths.empty() ? "" : trace_label(paths.front());
    if (paths.size() > 1) group.label += " (" + std::to_string(paths.size()) + " runs)";
    for (const auto& path : paths) {
      auto trace = open_for_analysis(path, request);
      if (!trace) return std::unexpected(trace.error());
      traces.push_back(std::make_unique<Trace>(std::move(*trace)));
      group.runs.push_back(traces.back().get());
      meter.add(1);
    }
    groups.push_back(std::move(group));
  }
  // Files of one name in different folders (run1/trace.sqlite, run2/trace.sqlite): name them by
  // their folder too.
  bool same_names = false;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = i + 1; j < groups.size(); ++j) same_names = same_names || groups[i].label == groups[j].label;
  }
  for (std::size_t k = 0; same_names && k < groups.size(); ++k) {
    const std::string& path = path_groups[k].front();
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos || slash == 0) continue;
    const auto parent = path.find_last_of('/', slash - 1);
    const auto from = parent == std::string::npos ? 0 : parent + 1;
    groups[k].label = path.substr(from, slash - from) + "/" + groups[k].label;
  }
  return run_analysis(groups, request);
}

}  // namespace kernscope
