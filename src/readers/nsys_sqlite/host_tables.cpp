#include "readers/nsys_sqlite/host_tables.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <utility>

namespace kernscope::nsys {
namespace {

constexpr const char* kSampleTable = "COMPOSITE_EVENTS";
constexpr const char* kChainTable = "SAMPLING_CALLCHAINS";
constexpr const char* kHostInfoTable = "KERNSCOPE_HOST_INFO";

// Distinct stacks by their frames, so a long profile of a loop keeps each stack once.
class StackInterner {
 public:
  explicit StackInterner(HostStacks& stacks) : stacks_(stacks) {
    if (stacks_.first_frame.empty()) stacks_.first_frame.push_back(0);
  }
  std::uint32_t add(const std::vector<StringId>& symbols, const std::vector<StringId>& modules,
                    const std::vector<std::uint8_t>& unresolved) {
    std::string key;
    key.reserve(symbols.size() * 8);
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      key.append(reinterpret_cast<const char*>(&symbols[i]), sizeof(StringId));
      key.append(reinterpret_cast<const char*>(&modules[i]), sizeof(StringId));
    }
    auto [it, inserted] = index_.emplace(std::move(key), static_cast<std::uint32_t>(stacks_.size()));
    if (inserted) {
      stacks_.symbol.insert(stacks_.symbol.end(), symbols.begin(), symbols.end());
      stacks_.module.insert(stacks_.module.end(), modules.begin(), modules.end());
      stacks_.unresolved.insert(stacks_.unresolved.end(), unresolved.begin(), unresolved.end());
      stacks_.first_frame.push_back(static_cast<std::uint32_t>(stacks_.symbol.size()));
    }
    return it->second;
  }

 private:
  HostStacks& stacks_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

Result<void> read_samples(const Database& db, const std::set<std::string>& tables, const StringOf& string_of, Trace& trace) {
  auto sample_columns = db.columns(kSampleTable);
  if (!sample_columns) return std::unexpected(sample_columns.error());
  if (!sample_columns->contains("id") || !sample_columns->contains("start") || !sample_columns->contains("globalTid")) {
    trace.note("cpu_samples_unreadable", NoteSeverity::kError, "CPU samples (COMPOSITE_EVENTS) lack id, start or globalTid: not read");
    return {};
  }
  std::string frames = "NULL, NULL, NULL, 0, NULL";
  std::string join;
  if (tables.contains(kChainTable)) {
    auto chain_columns = db.columns(kChainTable);
    if (!chain_columns) return std::unexpected(chain_columns.error());
    const bool has_strings = tables.contains("StringIds");
    auto column = [&](const char* name, const char* fallback) {
      return chain_columns->contains(name) ? std::string("c.") + name : std::string(fallback);
    };
    // The frames' names as StringIds ids, mapped through the reader's map of that table: joining
    // StringIds twice per frame and interning its text again cost as much as reading the 4 M API
    // calls of a 300 MB export (83 k frames).
    frames = column("stackDepth", "0") + ", " + (has_strings ? "c.symbol" : "NULL") + ", " +
             (has_strings ? "c.module" : "NULL") + ", coalesce(" + column("unresolved", "0") + ", 0), " +
             column("originalIP", "NULL");
    join = std::string(" LEFT JOIN ") + kChainTable + " c ON c.id = e.id";
  }
  auto stmt = db.prepare("SELECT e.id, e.start, e.globalTid, " + frames + " FROM " + kSampleTable + " e" + join +
                         " ORDER BY e.id, 4");
  if (!stmt) return std::unexpected(stmt.error());

  HostData& host = trace.host;
  StackInterner interner(host.stacks);
  std::vector<StringId> symbols, modules;
  std::vector<std::uint8_t> unresolved;
  std::int64_t current = 0;
  bool open = false;
  TimeNs time = 0;
  std::int64_t tid = 0;
  std::vector<TimeNs> times;
  std::vector<std::int64_t> tids;
  std::vector<std::uint32_t> stacks;
  std::int64_t unresolved_frames = 0;
  auto close = [&] {
    if (!open) return;
    times.push_back(time);
    tids.push_back(tid);
    stacks.push_back(interner.add(symbols, modules, unresolved));
    symbols.clear();
    modules.clear();
    unresolved.clear();
  };
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    const std::int64_t id = stmt->int64(0);
    if (!open || id != current) {
      close();
      open = true;
      current = id;
      time = stmt->int64(1);
      tid = stmt->int64(2);
    }
    if (stmt->is_null(3)) continue;  // a sample without a call chain
    const StringId symbol_id = stmt->is_null(4) ? kNoString : string_of(stmt->int64(4));
    std::string_view symbol = symbol_id == kNoString ? std::string_view() : trace.strings.get(symbol_id);
    const bool named = !symbol.empty();
    const bool not_resolved = stmt->int64(6) != 0 || symbol.empty();
    std::string address;
    if (symbol.empty()) {
      if (!stmt->is_null(7)) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(stmt->int64(7)));
        address = buffer;
      } else {
        address = "[unknown]";
      }
      symbol = address;
    }
    unresolved_frames += not_resolved ? 1 : 0;
    symbols.push_back(named ? symbol_id : trace.strings.intern(symbol));
    modules.push_back(stmt->is_null(5) ? kNoString : string_of(stmt->int64(5)));
    unresolved.push_back(not_resolved ? 1 : 0);
  }
  close();
  // In time order (ids follow time in nsys's exports and the hook's files, but need not).
  std::vector<std::size_t> order(times.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return times[a] < times[b]; });
  auto& s = host.samples;
  s.time_ns.reserve(order.size());
  s.global_tid.reserve(order.size());
  s.stack.reserve(order.size());
  for (std::size_t i : order) {
    s.time_ns.push_back(times[i]);
    s.global_tid.push_back(tids[i]);
    s.stack.push_back(stacks[i]);
  }
  if (unresolved_frames > 0) {
    trace.note("frames_without_symbol", NoteSeverity::kInfo,
               std::to_string(unresolved_frames) +
                   " sampled frames have no symbol (stripped binaries or missing debug information): shown by address",
               static_cast<std::int64_t>(unresolved_frames));
  }
  return {};
}

// nsys writes some names HTML-escaped ("&lt;module&gt;").
std::string unescaped(std::string_view text) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}, {"&amp;", '&'}};
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool replaced = false;
    if (text[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (text.substr(i, entity.size()) == entity) {
          out += c;
          i += entity.size() - 1;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i];
  }
  return out;
}

// The integers after each `"Function":` and `"File":` in one payload's JSON, in order (nsys
// 2025.3's "Python Periodic Sampling" schema: Frames [{Function, File, Line}], innermost first,
// Function and File StringIds ids).
std::vector<std::pair<std::int64_t, std::int64_t>> frame_ids(std::string_view json) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto number_after = [&](std::string_view key, std::size_t from, std::int64_t& value) -> std::size_t {
    const std::size_t at = json.find(key, from);
    if (at == std::string_view::npos) return at;
    std::size_t i = at + key.size();
    while (i < json.size() && json[i] == ' ') ++i;
    value = 0;
    bool digits = false;
    for (; i < json.size() && json[i] >= '0' && json[i] <= '9'; ++i) {
      value = value * 10 + (json[i] - '0');
      digits = true;
    }
    return digits ? i : std::string_view::npos;
  };
  for (std::size_t at = json.find("\"Frames\""); at != std::string_view::npos;) {
    std::int64_t function = 0, file = 0;
    const std::size_t after_function = number_after("\"Function\":", at, function);
    if (after_function == std::string_view::npos) break;
    const std::size_t after_file = number_after("\"File\":", after_function, file);
    if (after_file == std::string_view::npos) break;
    out.emplace_back(function, file);
    at = after_file;
  }
  return out;
}

// nsys --python-sampling: NVTX marks in domain "Python Periodic Sampling" whose payload (exported
// with --include-json) lists the frames. Read instead of the CPU IP samples of the same threads:
// they are Python's own frames, taken whether the thread runs or waits (wall clock).
Result<bool> read_python_samples(const Database& db, const std::set<std::string>& tables, Trace& trace) {
  if (!tables.contains("NVTX_EVENTS") || !tables.contains("StringIds")) return false;
  auto columns = db.columns("NVTX_EVENTS");
  if (!columns) return std::unexpected(columns.error());
  if (!columns->contains("jsonText") && !columns->contains("jsonTextId")) return false;
  const std::string json = columns->contains("jsonText") && columns->contains("jsonTextId")
                               ? "coalesce(n.jsonText, j.value)"
                               : columns->contains("jsonText") ? "n.jsonText" : "j.value";
  auto stmt = db.prepare(
      "SELECT n.start, n.globalTid, " + json +
      " FROM NVTX_EVENTS n" + (columns->contains("jsonTextId") ? " LEFT JOIN StringIds j ON j.id = n.jsonTextId" : "") +
      " WHERE n.eventType = 34 AND n.domainId IN (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND "
      "text = 'Python Periodic Sampling') ORDER BY n.start");
  if (!stmt) return std::unexpected(stmt.error());
  std::unordered_map<std::int64_t, StringId> names;
  auto name_of = [&](std::int64_t id) -> Result<StringId> {
    if (auto it = names.find(id); it != names.end()) return it->second;
    auto one = db.prepare("SELECT value FROM StringIds WHERE id = " + std::to_string(id));
    if (!one) return std::unexpected(one.error());
    auto row = one->step();
    if (!row) return std::unexpected(row.error());
    const StringId name = *row ? trace.strings.intern(unescaped(one->text(0))) : trace.strings.intern("[unknown]");
    names.emplace(id, name);
    return name;
  };
  HostData& host = trace.host;
  StackInterner interner(host.stacks);
  std::vector<StringId> symbols, modules;
  std::vector<std::uint8_t> unresolved;
  bool any = false;
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    if (stmt->is_null(2)) continue;
    symbols.clear();
    modules.clear();
    unresolved.clear();
    for (const auto& [function, file] : frame_ids(stmt->text(2))) {
      auto symbol = name_of(function);
      if (!symbol) return std::unexpected(symbol.error());
      auto module = name_of(file);
      if (!module) return std::unexpected(module.error());
      symbols.push_back(*symbol);
      modules.push_back(*module);
      unresolved.push_back(0);
    }
    host.samples.time_ns.push_back(stmt->int64(0));
    host.samples.global_tid.push_back(stmt->int64(1));
    host.samples.stack.push_back(interner.add(symbols, modules, unresolved));
    any = true;
  }
  if (any) {
    host.wall_clock = true;
    trace.note("python_samples", NoteSeverity::kInfo, "host samples: nsys's Python samples (--python-sampling); CPU samples of those threads are not used");
  }
  return any;
}

Result<void> read_host_info(const Database& db, Trace& trace) {
  auto stmt = db.prepare(std::string("SELECT name, value FROM ") + kHostInfoTable);
  if (!stmt) return std::unexpected(stmt.error());
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    std::string name(stmt->text(0)), value(stmt->is_null(1) ? std::string_view() : stmt->text(1));
    if (name == "sampler_lowered") trace.note("host_sampler_lowered", NoteSeverity::kInfo, "host sampler rate lowered, " + value);
    if (name == "sampler_stopped") trace.note("host_sampler_stopped", NoteSeverity::kDataLoss, "host sampler stopped " + value);
    if (name == "gc_dropped") trace.note("gc_dropped", NoteSeverity::kDataLoss, value + " garbage collections not kept (too many to keep in memory)");
    if (name == "gil_wait") trace.note("gil_wait", NoteSeverity::kInfo, "GIL waits " + value);
    if (name == "native_frames") trace.note("native_frames", NoteSeverity::kInfo, "host stacks: " + value);
    if (name == "sampler_hz_asked") trace.host.wall_clock = true;
    trace.host.info.emplace_back(std::move(name), std::move(value));
  }
  return {};
}

}  // namespace

Result<void> read_host_tables(const Database& db, const std::set<std::string>& tables, const StringOf& string_of, Trace& trace) {
  auto python = read_python_samples(db, tables, trace);
  if (!python) return std::unexpected(python.error());
  if (tables.contains(kSampleTable)) {
    // CPU samples of threads that have Python samples are left out (one kind of sample per thread).
    std::set<std::int64_t> python_threads(trace.host.samples.global_tid.begin(), trace.host.samples.global_tid.end());
    HostSampleColumns python_samples = std::move(trace.host.samples);
    trace.host.samples = {};
    if (auto r = read_samples(db, tables, string_of, trace); !r) return r;
    if (!python_threads.empty()) {
      HostSampleColumns merged;
      const auto& cpu = trace.host.samples;
      std::size_t a = 0, b = 0;
      while (a < python_samples.size() || b < cpu.size()) {
        if (b < cpu.size() && python_threads.contains(cpu.global_tid[b])) {
          ++b;
          continue;
        }
        const bool take_python = b == cpu.size() || (a < python_samples.size() && python_samples.time_ns[a] <= cpu.time_ns[b]);
        const auto& from = take_python ? python_samples : cpu;
        const std::size_t i = take_python ? a++ : b++;
        merged.time_ns.push_back(from.time_ns[i]);
        merged.global_tid.push_back(from.global_tid[i]);
        merged.stack.push_back(from.stack[i]);
      }
      trace.host.samples = std::move(merged);
    }
  }
  if (tables.contains(kHostInfoTable)) {
    if (auto r = read_host_info(db, trace); !r) return r;
  }
  return {};
}

}  // namespace kernscope::nsys
