#include "readers/nsys_sqlite/host_tables.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>

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

Result<void> read_samples(const Database& db, const std::set<std::string>& tables, Trace& trace) {
  auto sample_columns = db.columns(kSampleTable);
  if (!sample_columns) return std::unexpected(sample_columns.error());
  if (!sample_columns->contains("id") || !sample_columns->contains("start") || !sample_columns->contains("globalTid")) {
    trace.notes.push_back("CPU samples (COMPOSITE_EVENTS) lack id, start or globalTid: not read");
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
    frames = column("stackDepth", "0") + ", " + (has_strings ? "sym.value" : "NULL") + ", " +
             (has_strings ? "mod.value" : "NULL") + ", coalesce(" + column("unresolved", "0") + ", 0), " +
             column("originalIP", "NULL");
    join = std::string(" LEFT JOIN ") + kChainTable + " c ON c.id = e.id" +
           (has_strings ? " LEFT JOIN StringIds sym ON sym.id = c.symbol LEFT JOIN StringIds mod ON mod.id = c.module"
                        : "");
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
    std::string_view symbol = stmt->is_null(4) ? std::string_view() : stmt->text(4);
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
    symbols.push_back(trace.strings.intern(symbol));
    modules.push_back(stmt->is_null(5) ? kNoString : trace.strings.intern(stmt->text(5)));
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
    trace.notes.push_back(std::to_string(unresolved_frames) +
                          " sampled frames have no symbol (stripped binaries or missing debug information): shown "
                          "by address");
  }
  return {};
}

Result<void> read_host_info(const Database& db, Trace& trace) {
  auto stmt = db.prepare(std::string("SELECT name, value FROM ") + kHostInfoTable);
  if (!stmt) return std::unexpected(stmt.error());
  while (true) {
    auto more = stmt->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    std::string name(stmt->text(0)), value(stmt->is_null(1) ? std::string_view() : stmt->text(1));
    if (name == "sampler_lowered") trace.notes.push_back("host sampler rate lowered, " + value);
    if (name == "sampler_stopped") trace.notes.push_back("host sampler stopped " + value);
    if (name == "gc_dropped") trace.notes.push_back(value + " garbage collections not kept (too many to keep in memory)");
    if (name == "gil_wait") trace.notes.push_back("GIL waits " + value);
    if (name == "sampler_hz_asked") trace.host.wall_clock = true;
    trace.host.info.emplace_back(std::move(name), std::move(value));
  }
  return {};
}

}  // namespace

Result<void> read_host_tables(const Database& db, const std::set<std::string>& tables, Trace& trace) {
  if (tables.contains(kSampleTable)) {
    if (auto r = read_samples(db, tables, trace); !r) return r;
  }
  if (tables.contains(kHostInfoTable)) {
    if (auto r = read_host_info(db, trace); !r) return r;
  }
  return {};
}

}  // namespace kernscope::nsys
