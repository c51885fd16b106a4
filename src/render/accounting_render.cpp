#include "render/accounting_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace kernscope {
namespace {

// Parts in category order, then by name: the columns of the step table.
std::vector<std::string> part_columns(const StepAccounting& a) {
  std::set<std::string> seen;
  for (const auto& s : a.steps) {
    for (const auto& [k, v] : s.parts) seen.insert(k);
  }
  std::vector<std::string> out;
  for (const TimeCategory c : kAllTimeCategories) {
    const std::string prefix = std::string(category_name(c)) + ".";
    for (const auto& k : seen) {
      if (k.starts_with(prefix)) out.push_back(k);
    }
  }
  return out;
}

std::vector<Cell> category_cells(const TimeAccount& a) {
  std::vector<Cell> cells;
  for (const TimeCategory c : kAllTimeCategories) cells.emplace_back(a.at(c));
  return cells;
}

double share(std::int64_t part, std::int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

// The largest parts of a category, "name 12.3 %" each, at most `n`.
std::string top_parts(const TimeAccount& a, TimeCategory c, std::size_t n) {
  const std::string prefix = std::string(category_name(c)) + ".";
  std::vector<std::pair<std::int64_t, std::string>> parts;
  for (const auto& [k, v] : a.parts) {
    if (k.starts_with(prefix) && v > 0) parts.push_back({v, k.substr(prefix.size())});
  }
  std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (std::size_t i = 0; i < parts.size() && i < n; ++i) {
    out += fmt::format("{}{} {:.1f} %", i ? ", " : "", parts[i].second, share(parts[i].first, a.window_ns));
  }
  return out;
}

std::string shares_line(const TimeAccount& a) {
  std::string out;
  for (const TimeCategory c : kAllTimeCategories) {
    out += fmt::format("{}{} {:.1f} %", out.empty() ? "" : ", ", category_name(c), share(a.at(c), a.window_ns));
  }
  return out;
}

}  // namespace

Table step_accounting_table(const StepAnalysis& steps, const StepAccounting& accounting) {
  Table t;
  t.report = "account";
  t.title = "Where Each Step's Time Goes";
  t.columns = {{"Step"}, {"Group"}, {"Phase"}, {"PID"}, {"Start", Unit::kTimestamp}, {"Wall", Unit::kDuration}};
  for (const TimeCategory c : kAllTimeCategories) t.columns.push_back({std::string(category_name(c)), Unit::kDuration});
  const auto parts = part_columns(accounting);
  for (const auto& p : parts) t.columns.push_back({p, Unit::kDuration});
  t.columns.push_back({"copy pageable", Unit::kDuration});
  t.columns.push_back({"Bottleneck"});
  for (std::size_t i = 0; i < steps.steps.size() && i < accounting.steps.size(); ++i) {
    const Step& s = steps.steps[i];
    const TimeAccount& a = accounting.steps[i];
    std::vector<Cell> row = {static_cast<std::int64_t>(i), s.group, std::string(phase_name(s.phase)), pid_of(s.global_pid), s.start_ns,
                             a.window_ns};
    for (auto& cell : category_cells(a)) row.push_back(std::move(cell));
    for (const auto& p : parts) {
      auto it = a.parts.find(p);
      row.emplace_back(it == a.parts.end() ? std::int64_t{0} : it->second);
    }
    row.emplace_back(a.pageable_copy_ns);
    row.emplace_back(std::string(category_name(a.bottleneck())));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table accounting_groups_table(const StepAccounting& accounting) {
  Table t;
  t.report = "account_groups";
  t.title = "Where the Time Goes by Group and Phase";
  t.columns = {{"Scope"}, {"Name"}, {"Phase"}, {"Steps"}, {"Wall", Unit::kDuration}};
  for (const TimeCategory c : kAllTimeCategories) t.columns.push_back({std::string(category_name(c)), Unit::kDuration});
  t.columns.push_back({"Bottleneck"});
  auto add = [&](const char* scope, const AccountGroup& g) {
    std::vector<Cell> row = {std::string(scope), g.name, std::string(phase_name(g.phase)), g.steps, g.account.window_ns};
    for (auto& cell : category_cells(g.account)) row.push_back(std::move(cell));
    row.emplace_back(std::string(category_name(g.account.bottleneck())));
    t.rows.push_back(std::move(row));
  };
  for (const auto& g : accounting.groups) add("group", g);
  for (const auto& p : accounting.phases) add("phase", p);
  std::int64_t steps = 0;
  for (const auto& p : accounting.phases) steps += p.steps;
  if (!accounting.phases.empty()) add("loop", AccountGroup{"all steps", Phase::kUnknown, steps, accounting.loop});
  return t;
}

std::string render_accounting_summary(const StepAccounting& a, const std::string& indent) {
  if (a.phases.empty()) return {};
  std::string out;
  for (const auto& p : a.phases) {
    out += fmt::format("{}{} ({} steps, {:.3f} ms): {}\n", indent, p.name, p.steps, static_cast<double>(p.account.window_ns) / 1e6,
                       shares_line(p.account));
    // A phase of several groups (warm-up, then measured steps): the last group is the steady
    // state the headlines read; its own shares and bottleneck are said apart.
    const AccountGroup* last = nullptr;
    std::size_t groups = 0;
    for (const auto& g : a.groups) {
      if (g.phase != p.phase) continue;
      ++groups;
      last = &g;
    }
    if (groups > 1 && last) {
      const TimeCategory b = last->account.bottleneck();
      out += fmt::format("{}  its last group {} ({} steps): {}; most: {}", indent, last->name, last->steps, shares_line(last->account),
                         category_name(b));
      if (const std::string parts = top_parts(last->account, b, 2); !parts.empty()) out += " (" + parts + ")";
      out += "\n";
    }
  }
  // The headline is the steady state's (the last group of each phase) where warm-up groups came
  // first, so the first thing read is not warm-up time (report states one scope).
  const TimeAccount& head = a.steady_is_loop ? a.loop : a.steady;
  std::string scope = "the steps' time";
  if (!a.steady_is_loop) {
    scope = "the steady steps' time (";
    for (std::size_t i = 0; i < a.steady_groups.size(); ++i) scope += (i ? ", " : "") + a.steady_groups[i];
    scope += "; earlier groups left out)";
  }
  const TimeCategory b = head.bottleneck();
  out += fmt::format("{}most of {}: {} ({:.1f} %", indent, scope, category_name(b), share(head.at(b), head.window_ns));
  if (const std::string parts = top_parts(head, b, 3); !parts.empty()) out += ": " + parts;
  out += ")\n";
  // What else took a tenth or more, with its parts: the second place a user would look.
  for (const TimeCategory c : kAllTimeCategories) {
    if (c == b || share(head.at(c), head.window_ns) < 10) continue;
    out += fmt::format("{}also {} {:.1f} %", indent, category_name(c), share(head.at(c), head.window_ns));
    if (const std::string parts = top_parts(head, c, 3); !parts.empty()) out += ": " + parts;
    out += "\n";
  }
  const std::int64_t framework = a.loop.parts.count("host.framework") ? a.loop.parts.at("host.framework") : 0;
  if (share(framework, a.loop.window_ns) >= 1 && !a.loop.framework.empty()) {
    std::vector<std::pair<std::int64_t, std::string>> ranges;
    for (const auto& [k, v] : a.loop.framework) ranges.push_back({v, k});
    std::stable_sort(ranges.begin(), ranges.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    out += indent + "host framework time in:";
    for (std::size_t i = 0; i < ranges.size() && i < 3; ++i) {
      out += fmt::format("{} {} {:.1f} %", i ? ";" : "", ranges[i].second, share(ranges[i].first, a.loop.window_ns));
    }
    out += "\n";
  }
  if (share(a.loop.pageable_copy_ns, a.loop.window_ns) >= 1) {
    out += fmt::format("{}pageable copies: {:.1f} % of the steps' time (not pinned: the copy engine waits for a staging copy)\n",
                       indent, share(a.loop.pageable_copy_ns, a.loop.window_ns));
  }
  for (const auto& n : a.notes) out += indent + "note: " + n.text + "\n";
  return out;
}

void write_accounting_json(JsonWriter& json, const StepAccounting& a) {
  auto categories = [&](const TimeAccount& t) {
    json.key("categories_ns").begin_object();
    for (const TimeCategory c : kAllTimeCategories) json.member(category_name(c), t.at(c));
    json.end_object();
    json.key("parts_ns").begin_object();
    for (const auto& [k, v] : t.parts) json.member(k, v);
    json.end_object();
  };
  json.begin_object();
  json.key("phases").begin_array();
  for (const auto& p : a.phases) {
    json.begin_object().member("phase", p.name).member("steps", p.steps).member("wall_ns", p.account.window_ns);
    categories(p.account);
    json.member("bottleneck", category_name(p.account.bottleneck())).end_object();
  }
  json.end_array();
  json.key("loop").begin_object().member("wall_ns", a.loop.window_ns);
  categories(a.loop);
  json.end_object();
  json.member("bottleneck", a.phases.empty() ? std::string_view("none") : category_name(a.loop.bottleneck()));
  json.member("process", pid_of(a.process)).member("processes", a.processes);
  json.end_object();
}

std::string render_accounting_json(const std::vector<Table>& tables, const StepAccounting& accounting,
                                   const RenderOptions& options) {
  JsonWriter json(0);
  json.begin_object();
  for (const Table& t : tables) json.key(t.report).raw(table_json(t, options));
  json.key("accounting");
  write_accounting_json(json, accounting);
  json.end_object();
  return json.finish();
}

std::string render_accounting_text(const std::vector<Table>& tables, const StepAccounting& accounting,
                                   const std::string& steps_method, const RenderOptions& options) {
  std::ostringstream text;
  for (const Table& t : tables) render(text, t, options);
  text << "\nSteps from: " << steps_method << "\n" << render_accounting_summary(accounting, "");
  return text.str();
}

}  // namespace kernscope
