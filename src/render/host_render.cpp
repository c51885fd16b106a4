#include "render/host_render.hpp"

#include <map>
#include <sstream>
#include <unordered_map>

#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope {
std::string host_group_root(const HostGroup& g) { return g.name + " [" + std::string(phase_name(g.phase)) + "]"; }

std::string host_frame_name(const Trace& trace, std::uint32_t frame) {
  const HostStacks& s = trace.host.stacks;
  std::string name(trace.strings.get(s.symbol[frame]));
  std::string_view file = trace.strings.get(s.module[frame]);
  if (const std::size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  if (!file.empty() && file != name) name += " (" + std::string(file) + ")";
  for (char& c : name) {
    if (c == ';' || c == '\n' || c == '\r') c = ',';  // ';' separates frames; a line is one stack
  }
  return name;
}

std::vector<std::string> host_stack_names(const Trace& trace, std::uint32_t stack) {
  const HostStacks& s = trace.host.stacks;
  std::vector<std::string> names;
  bool in_run = false;  // the last name stands for a run of unresolved frames of run_module
  StringId run_module = kNoString;
  for (std::uint32_t f = s.first_frame[stack + 1]; f-- > s.first_frame[stack];) {
    const bool unresolved = f < s.unresolved.size() && s.unresolved[f];
    if (!unresolved) {
      names.push_back(host_frame_name(trace, f));
      in_run = false;
      continue;
    }
    if (in_run && run_module == s.module[f]) continue;  // the same run (a module of no name included)
    in_run = true;
    run_module = s.module[f];
    std::string_view file = trace.strings.get(s.module[f]);
    if (const std::size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
    std::string name = "[unresolved] (" + (file.empty() ? std::string("unknown module") : std::string(file)) + ")";
    for (char& c : name) {
      if (c == ';' || c == '\n' || c == '\r') c = ',';
    }
    names.push_back(std::move(name));
  }
  return names;
}

std::string render_host_summary(const HostProfile& profile) {
  std::string out = "\nHost thread: " + std::to_string(tid_of(profile.global_tid));
  if (!profile.thread_name.empty()) out += " (" + profile.thread_name + ")";
  if (!profile.thread_reason.empty()) out += ", " + profile.thread_reason;
  out += "; " + std::to_string(profile.samples_total) + " samples of it, " + std::to_string(profile.collections.size()) +
         " garbage collections in the trace\n";
  if (!profile.step_method.empty()) out += "Steps: " + profile.step_method + "\n";
  if (!profile.findings.empty()) {
    out += "\nFindings:\n";
    for (const auto& f : profile.findings) out += "  - " + f + "\n";
  }
  if (!profile.notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : profile.notes) out += "  - " + n.text + "\n";
  }
  return out;
}

std::string render_collapsed_stacks(const Trace& trace, const HostProfile& profile) {
  std::string out;
  for (const HostGroup& g : profile.groups) {
    std::map<std::uint32_t, std::int64_t> counts;  // stack -> samples
    for (std::uint32_t s : g.sample_stacks) ++counts[s];
    std::map<std::string, std::int64_t> lines;     // sorted, merged when names coincide
    for (const auto& [s, n] : counts) {
      std::string line = host_group_root(g);
      for (const std::string& name : host_stack_names(trace, s)) {
        line += ';';  // not ";" + string&&: GCC 12's -Wrestrict false positive
        line += name;
      }
      lines[line] += n;
    }
    for (const auto& [line, n] : lines) out += line + " " + std::to_string(n) + "\n";
  }
  return out;
}

std::string render_speedscope(const Trace& trace, const HostProfile& profile) {
  std::vector<std::string> frames;
  std::unordered_map<std::string, std::size_t> frame_index;
  auto index_of = [&](const std::string& name) {
    auto [it, inserted] = frame_index.emplace(name, frames.size());
    if (inserted) frames.push_back(name);
    return it->second;
  };
  struct Profile {
    std::string name;
    std::vector<std::vector<std::size_t>> samples;
    std::vector<std::int64_t> weights;
    std::int64_t total = 0;
  };
  std::vector<Profile> profiles;
  for (const HostGroup& g : profile.groups) {
    if (g.samples == 0) continue;
    Profile p;
    p.name = host_group_root(g);
    p.weights = g.sample_ns;  // the host time each sample stands for (host_profile.hpp)
    for (std::int64_t w : p.weights) p.total += w;
    for (std::uint32_t s : g.sample_stacks) {
      std::vector<std::size_t> path;
      for (const std::string& name : host_stack_names(trace, s)) path.push_back(index_of(name));
      p.samples.push_back(std::move(path));
    }
    profiles.push_back(std::move(p));
  }
  JsonWriter json(0);
  json.begin_object().member("$schema", "https://www.speedscope.app/file-format-schema.json");
  json.key("shared").begin_object().key("frames").begin_array();
  for (const auto& f : frames) json.begin_object().member("name", f).end_object();
  json.end_array().end_object();
  json.key("profiles").begin_array();
  for (const auto& p : profiles) {
    json.begin_object().member("type", "sampled").member("name", p.name).member("unit", "nanoseconds");
    json.member("startValue", 0).member("endValue", p.total);
    json.key("samples").begin_array();
    for (const auto& path : p.samples) {
      json.begin_array();
      for (std::size_t i : path) json.value(i);
      json.end_array();
    }
    json.end_array().key("weights").begin_array();
    for (std::int64_t w : p.weights) json.value(w);
    json.end_array().end_object();
  }
  json.end_array().member("name", "kernscope host").member("exporter", "kernscope");
  json.member("activeProfileIndex", 0).end_object();
  return json.finish();
}

std::string render_host_json(const std::vector<Table>& tables, const HostProfile& profile, const RenderOptions& options) {
  JsonWriter json(0);
  json.begin_object();
  for (const Table& t : tables) json.key(t.report).raw(table_json(t, options));
  json.key("findings").begin_array();
  for (const auto& f : profile.findings) json.value(f);
  json.end_array();
  write_notes_json(json.key("notes"), profile.notes);
  json.end_object();
  return json.finish();
}

std::string render_host_text(const std::vector<Table>& tables, const HostProfile& profile, const RenderOptions& options) {
  std::ostringstream text;
  for (const Table& t : tables) render(text, t, options);
  text << render_host_summary(profile);
  return text.str();
}

}  // namespace kernscope
