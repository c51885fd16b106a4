#include "render/whatif_render.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "render/notes_json.hpp"

namespace kernscope {
namespace {

double in_ms(double ns) { return ns / 1e6; }
double change_percent(double traced, double predicted) { return traced > 0 ? 100.0 * (predicted - traced) / traced : 0.0; }
double path_share(std::int64_t part, std::int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

std::string changes_text(const WhatIfResult& r) {
  if (r.changes.empty()) return "no change (the replay as traced)";
  std::string out;
  for (const auto& c : r.changes) out += (out.empty() ? "" : " + ") + c.text;
  return out;
}

// The largest entries of a map of parts or operations, "name 12.3 %" each.
std::string top_path_parts(const PathAccount& p, const std::string& prefix, std::size_t n) {
  std::vector<std::pair<std::int64_t, std::string>> parts;
  for (const auto& [k, v] : p.parts) {
    if (k.starts_with(prefix) && v > 0) parts.push_back({v, k.substr(prefix.size())});
  }
  std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (std::size_t i = 0; i < parts.size() && i < n; ++i) out += fmt::format("{}{} {:.1f} %", i ? ", " : "", parts[i].second, path_share(parts[i].first, p.ns));
  return out;
}

TimeCategory path_bottleneck(const PathAccount& p) {
  std::size_t best = 0;
  for (std::size_t c = 1; c < kTimeCategories; ++c) {
    if (p.category[c] > p.category[best]) best = c;
  }
  return kAllTimeCategories[best];
}

std::string group_label(const WhatIfGroup& g) { return fmt::format("{} ({}, {} steps)", g.group, phase_name(g.phase), g.steps); }

}  // namespace

const WhatIfGroup* headline_group(const WhatIfResult& result) {
  const WhatIfGroup* decode = nullptr;
  const WhatIfGroup* prefill = nullptr;
  const WhatIfGroup* most = nullptr;
  for (const auto& g : result.groups) {
    if (g.phase == Phase::kDecode) decode = &g;
    if (g.phase == Phase::kPrefill) prefill = &g;
    if (!most || g.steps > most->steps) most = &g;
  }
  return decode ? decode : prefill ? prefill : most;
}

Table whatif_steps_table(const StepAnalysis& steps, const WhatIfResult& result) {
  Table t;
  t.report = "whatif";
  t.title = "What If: Each Step Replayed";
  t.columns = {{"Step"}, {"Group"}, {"Phase"}, {"Start", Unit::kTimestamp}, {"Traced", Unit::kDuration}, {"Predicted", Unit::kDuration},
               {"Change", Unit::kPercent}};
  for (const auto& rs : result.steps) {
    const Step& s = steps.steps[rs.step];
    t.rows.push_back({static_cast<std::int64_t>(rs.step), s.group, std::string(phase_name(s.phase)), s.start_ns, rs.traced_ns, rs.predicted_ns,
                      change_percent(static_cast<double>(rs.traced_ns), static_cast<double>(rs.predicted_ns))});
  }
  return t;
}

Table whatif_groups_table(const WhatIfResult& result) {
  Table t;
  t.report = "whatif_groups";
  t.title = "What If: Step Time by Group (medians, and means)";
  t.columns = {{"Group"}, {"Phase"}, {"Steps"}, {"Traced", Unit::kDuration}, {"Predicted", Unit::kDuration}, {"Change", Unit::kPercent},
               {"Traced Mean", Unit::kDuration}, {"Predicted Mean", Unit::kDuration}};
  for (const auto& g : result.groups) {
    t.rows.push_back({g.group, std::string(phase_name(g.phase)), g.steps, g.traced_step_ns, g.predicted_step_ns,
                      change_percent(static_cast<double>(g.traced_step_ns), static_cast<double>(g.predicted_step_ns)),
                      static_cast<std::int64_t>(g.traced_mean_ns), static_cast<std::int64_t>(g.predicted_mean_ns)});
  }
  return t;
}

std::string render_whatif_text(const WhatIfResult& r) {
  std::string out = "What if: " + changes_text(r) + "\n";
  if (const WhatIfGroup* h = headline_group(r)) {
    const char* what = h->phase == Phase::kDecode ? "TPOT" : h->phase == Phase::kPrefill ? "TTFT" : "step time";
    out += fmt::format("  {} {:.3f} ms -> {:.3f} ms predicted ({:+.1f} %), {}\n", what, in_ms(static_cast<double>(h->traced_step_ns)),
                       in_ms(static_cast<double>(h->predicted_step_ns)),
                       change_percent(static_cast<double>(h->traced_step_ns), static_cast<double>(h->predicted_step_ns)), group_label(*h));
  }
  out += "Step time by group (median; a step runs from the previous step's completion, its range's or GPU work's end):\n";
  for (const auto& g : r.groups) {
    out += fmt::format("  {:<40} traced {:>10.3f} ms  predicted {:>10.3f} ms  ({:+.1f} %)\n", group_label(g), in_ms(static_cast<double>(g.traced_step_ns)),
                       in_ms(static_cast<double>(g.predicted_step_ns)),
                       change_percent(static_cast<double>(g.traced_step_ns), static_cast<double>(g.predicted_step_ns)));
  }
  out += fmt::format("Read from the trace: launch latency {:.1f} us, gap between queued operations {:.1f} us, graph launch {:.1f} us; "
                     "{} operations and {} host calls replayed\n",
                     static_cast<double>(r.launch_latency_ns) / 1e3, static_cast<double>(r.queue_gap_ns) / 1e3,
                     static_cast<double>(r.graph_launch_ns) / 1e3, r.operations, r.host_calls);
  for (const auto& n : r.notes) out += "  ! " + n.text + "\n";
  return out;
}

namespace {

// The head both what-if documents share: the object, the changes replayed, the groups' array opened.
void open_changes_and_groups(JsonWriter& json, const WhatIfResult& r) {
  json.begin_object();
  json.key("changes").begin_array();
  for (const auto& c : r.changes) json.value(c.text);
  json.end_array();
  json.key("groups").begin_array();
}

}  // namespace

void write_whatif_json(JsonWriter& json, const WhatIfResult& r) {
  open_changes_and_groups(json, r);
  for (const auto& g : r.groups) {
    json.begin_object()
        .member("group", g.group)
        .member("phase", phase_name(g.phase))
        .member("steps", g.steps)
        .member("traced_step_ns", g.traced_step_ns)
        .member("predicted_step_ns", g.predicted_step_ns)
        .member("traced_mean_ns", g.traced_mean_ns)
        .member("predicted_mean_ns", g.predicted_mean_ns)
        .end_object();
  }
  json.end_array();
  if (const WhatIfGroup* h = headline_group(r)) json.member("headline_group", h->group);
  json.member("traced_span_ns", r.traced_span_ns).member("predicted_span_ns", r.predicted_span_ns);
  json.key("calibration").begin_object();
  json.member("launch_latency_ns", r.launch_latency_ns).member("queue_gap_ns", r.queue_gap_ns).member("graph_launch_ns", r.graph_launch_ns)
      .member("graph_node_gap_ns", r.graph_node_gap_ns);
  json.member("unexplained_ns", r.unexplained_ns).member("operations", r.operations).member("host_calls", r.host_calls);
  json.end_object();
  write_notes_json(json.key("notes"), r.notes);
  json.end_object();
}

namespace {

// `part`'s rows with a Rank column in front, appended to `into` (which takes part's columns first).
void append_with_rank(Table& into, const Table& part, std::int64_t rank) {
  if (into.columns.empty()) {
    into = part;
    into.rows.clear();
    into.columns.insert(into.columns.begin(), Column{"Rank"});
  }
  for (auto row : part.rows) {
    row.insert(row.begin(), Cell{rank});
    into.rows.push_back(std::move(row));
  }
}

}  // namespace

std::vector<Table> whatif_ranks_tables(const std::vector<RankWhatIf>& ranks) {
  Table groups, steps;
  for (const RankWhatIf& r : ranks) {
    append_with_rank(groups, whatif_groups_table(*r.result), r.rank);
    append_with_rank(steps, whatif_steps_table(*r.steps, *r.result), r.rank);
  }
  return {std::move(groups), std::move(steps)};
}

std::string render_whatif_ranks_text(const std::vector<Note>& notes, const std::vector<RankWhatIf>& ranks) {
  std::string text;
  for (const auto& n : notes) text += n.text + "\n";
  for (const RankWhatIf& r : ranks) text += "\n== rank " + std::to_string(r.rank) + ": " + r.path + " ==\n" + render_whatif_text(*r.result);
  return text;
}

void write_whatif_ranks_json(JsonWriter& json, bool together, const std::vector<Note>& notes, const std::vector<RankWhatIf>& ranks) {
  json.begin_object();
  json.member("together", together);
  write_notes_json(json.key("notes"), notes);
  json.key("ranks").begin_array();
  for (const RankWhatIf& r : ranks) {
    json.begin_object().member("rank", r.rank).member("path", r.path).member("offset_ns", r.offset_ns);
    json.key("whatif");
    write_whatif_json(json, *r.result);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

Table critical_path_table(const WhatIfResult& r) {
  Table t;
  t.report = "critical_path";
  t.title = "Where Each Group's Critical Path Runs";
  t.columns = {{"Group"}, {"Phase"}, {"Steps"}, {"Category"}, {"Part"}, {"On Path", Unit::kDuration}, {"Share", Unit::kPercent}};
  for (const auto& g : r.groups) {
    for (const auto& [part, ns] : g.path.parts) {
      if (ns == 0) continue;
      const std::string category = part.substr(0, part.find('.'));
      t.rows.push_back({g.group, std::string(phase_name(g.phase)), g.steps, category, part, ns, path_share(ns, g.path.ns)});
    }
  }
  return t;
}

std::string render_critical_path_text(const WhatIfResult& r) {
  std::string out;
  if (!r.changes.empty()) out += "Critical path with " + changes_text(r) + " (replayed)\n";
  for (const auto& g : r.groups) {
    const PathAccount& p = g.path;
    out += fmt::format("{}: path {:.3f} ms per step\n", group_label(g), in_ms(static_cast<double>(p.ns) / static_cast<double>(std::max<std::int64_t>(1, g.steps))));
    std::string cats;
    for (const TimeCategory c : kAllTimeCategories) {
      const std::int64_t v = p.category[static_cast<std::size_t>(c)];
      if (v > 0) cats += fmt::format("{}{} {:.1f} %", cats.empty() ? "" : ", ", category_name(c), path_share(v, p.ns));
    }
    out += "  by category: " + cats + "\n";
    const TimeCategory b = path_bottleneck(p);
    if (const std::string parts = top_path_parts(p, std::string(category_name(b)) + ".", 4); !parts.empty()) {
      out += fmt::format("  most: {} ({})\n", category_name(b), parts);
    }
    std::vector<std::pair<std::int64_t, std::string>> ops;
    for (const auto& [name, cn] : p.operations) ops.push_back({cn.second, name});
    std::stable_sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (std::size_t i = 0; i < ops.size() && i < 5; ++i) {
      const auto& cn = p.operations.at(ops[i].second);
      std::string name = ops[i].second;
      if (name.size() > 70) name = name.substr(0, 69) + "…";
      out += fmt::format("    {:>5.1f} %  {:>6} x  {}\n", path_share(ops[i].first, p.ns), cn.first, name);
    }
    if (b != g.accounting_bottleneck) {
      out += fmt::format("  ! the step accounting's most is {}, the path's {}: the accounting counts what ran at each instant, the path what "
                         "the step waited for ({} overlapped by {} is off the path)\n",
                         category_name(g.accounting_bottleneck), category_name(b), category_name(g.accounting_bottleneck), category_name(b));
    } else {
      out += fmt::format("  the step accounting agrees: most is {}\n", category_name(b));
    }
  }
  for (const auto& n : r.notes) out += "  ! " + n.text + "\n";
  return out;
}

void write_critical_path_json(JsonWriter& json, const WhatIfResult& r) {
  open_changes_and_groups(json, r);
  for (const auto& g : r.groups) {
    json.begin_object().member("group", g.group).member("phase", phase_name(g.phase)).member("steps", g.steps).member("path_ns", g.path.ns);
    json.key("categories_ns").begin_object();
    for (const TimeCategory c : kAllTimeCategories) json.member(category_name(c), g.path.category[static_cast<std::size_t>(c)]);
    json.end_object();
    json.key("parts_ns").begin_object();
    for (const auto& [k, v] : g.path.parts) json.member(k, v);
    json.end_object();
    json.key("operations").begin_array();
    for (const auto& [name, cn] : g.path.operations) json.begin_object().member("name", name).member("count", cn.first).member("ns", cn.second).end_object();
    json.end_array();
    json.member("bottleneck", category_name(path_bottleneck(g.path)));
    json.member("accounting_bottleneck", category_name(g.accounting_bottleneck));
    json.end_object();
  }
  json.end_array();
  write_notes_json(json.key("notes"), r.notes);
  json.end_object();
}

std::string critical_path_perfetto(const WhatIfResult& r) {
  JsonWriter json(0);
  json.begin_object().key("traceEvents").begin_array();
  // Links were collected from the end backwards: in time order here.
  std::vector<PathLink> links(r.links.rbegin(), r.links.rend());
  auto tid = [](const PathLink& l) { return l.gpu ? fmt::format("stream {}", l.track & 0xFFFFFFFF) : fmt::format("thread {}", l.track & 0xFFFFFF); };
  for (std::size_t i = 0; i < links.size(); ++i) {
    const PathLink& l = links[i];
    const double ts = static_cast<double>(l.start) / 1e3, dur = static_cast<double>(l.end - l.start) / 1e3;
    json.begin_object().member("name", l.name).member("cat", l.part).member("ph", "X").member("ts", ts).member("dur", dur);
    json.member("pid", "critical path").member("tid", tid(l)).end_object();
    if (i + 1 < links.size()) {
      json.begin_object().member("name", "path").member("cat", "critical_path").member("ph", "s").member("id", static_cast<std::int64_t>(i));
      json.member("ts", ts).member("pid", "critical path").member("tid", tid(l)).end_object();
      const PathLink& n = links[i + 1];
      json.begin_object().member("name", "path").member("cat", "critical_path").member("ph", "f").member("bp", "e");
      json.member("id", static_cast<std::int64_t>(i)).member("ts", static_cast<double>(n.start) / 1e3).member("pid", "critical path");
      json.member("tid", tid(n)).end_object();
    }
  }
  json.end_array().member("displayTimeUnit", "ns").end_object();
  return json.finish();
}

}  // namespace kernscope
