#include "analyses/nsys/api_lookup.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "base/parallel_chunks.hpp"
#include "model/api_roles.hpp"

namespace kernscope::report {
namespace {

// Set bits of a word. std::popcount compiles to a call into libgcc's table-driven count unless
// the build targets a CPU with the POPCNT instruction (-mpopcnt, not assumed for a portable wheel):
// the inline bit arithmetic below is several times faster than that call, and a lookup makes one.
inline unsigned set_bits(std::uint64_t x) {
#if defined(__POPCNT__)
  return static_cast<unsigned>(std::popcount(x));
#else
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<unsigned>((x * 0x0101010101010101ULL) >> 56);
#endif
}

bool encloses(const ApiCallColumns& a, RowIndex outer, RowIndex inner) {
  return a.start_ns[outer] <= a.start_ns[inner] && a.end_ns[inner] <= a.end_ns[outer];
}

}  // namespace

std::size_t ApiLookup::Process::rank(std::uint32_t correlation_id) const {
  const std::size_t word = correlation_id / 64;
  if (word >= present.size()) return kNoRank;
  const std::uint64_t bit = std::uint64_t{1} << (correlation_id % 64);
  if (!(present[word] & bit)) return kNoRank;
  return before[word] + static_cast<std::size_t>(set_bits(present[word] & (bit - 1)));
}

const RowIndex* ApiLookup::Process::head(std::uint32_t correlation_id) const {
  if (!indexed()) {
    auto it = sparse.find(correlation_id);
    return it == sparse.end() ? nullptr : &it->second;
  }
  const std::size_t r = rank(correlation_id);
  return r == kNoRank ? nullptr : &heads[r];
}

ApiLookup::ApiLookup(const ApiCallColumns& api, std::size_t min_rows_per_chunk, std::size_t cores) : api_(api) {
  const ChunkPlan plan(api.size(), min_rows_per_chunk, 0, cores);
  // 1. Each process's largest id and number of calls. Rows come in long runs of one process: its
  //    tally is looked up once per run. Chunks of rows count apart; their tallies are merged.
  struct Extent {
    std::int64_t key;
    std::uint32_t max_id = 0;
    std::size_t calls = 0;
  };
  std::vector<std::vector<Extent>> chunk_extents(plan.count());
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
    auto& extents = chunk_extents[c];
    Extent* run = nullptr;
    for (std::size_t i = begin; i < end; ++i) {
      const std::int64_t key = process_key(api.global_tid[i]);
      if (!run || run->key != key) {
        run = nullptr;
        for (auto& e : extents) {
          if (e.key == key) run = &e;
        }
        if (!run) run = &extents.emplace_back(Extent{key});
      }
      run->max_id = std::max(run->max_id, api.correlation_id[i]);
      ++run->calls;
    }
  });
  std::unordered_map<std::int64_t, Extent> extents;
  for (const auto& chunk : chunk_extents) {
    for (const auto& e : chunk) {
      auto& total = extents.try_emplace(e.key, Extent{e.key}).first->second;
      total.max_id = std::max(total.max_id, e.max_id);
      total.calls += e.calls;
    }
  }
  bool all_indexed = true;
  for (const auto& [key, e] : extents) {
    Process& p = processes_[key];
    // Indexed when the ids span at most 256 per traced call (the index then costs at most ~48
    // bytes a call, a hash-map node about as much). CUPTI shares ids with untraced calls; the
    // llama export has ~6 ids per traced call.
    if (static_cast<std::size_t>(e.max_id) + 1 <= 256 * e.calls + (std::size_t{1} << 22)) {
      p.present.assign(static_cast<std::size_t>(e.max_id) / 64 + 1, 0);
    } else {
      all_indexed = false;
    }
  }
  if (processes_.size() == 1) {
    single_key_ = processes_.begin()->first;
    single_ = &processes_.begin()->second;
  }
  // A row's process entry, looked up once per run of one process's rows (one per thread of work).
  struct ProcessOfRow {
    const ApiCallColumns& api;
    std::unordered_map<std::int64_t, Process>& processes;
    std::int64_t key = -1;
    Process* entry = nullptr;
    Process& operator()(std::size_t i) {
      const std::int64_t k = process_key(api.global_tid[i]);
      if (!entry || k != key) {
        key = k;
        entry = &processes.find(k)->second;
      }
      return *entry;
    }
  };
  ProcessOfRow process_of{api, processes_};
  // 2. The bits of the ids that calls have (chunks may share a word: set atomically).
  plan.run([&](std::size_t, std::size_t begin, std::size_t end) {
    ProcessOfRow process{api, processes_};
    for (std::size_t i = begin; i < end; ++i) {
      Process& p = process(i);
      if (!p.indexed()) continue;
      const std::uint32_t id = api.correlation_id[i];
      std::atomic_ref<std::uint64_t>(p.present[id / 64]).fetch_or(std::uint64_t{1} << (id % 64), std::memory_order_relaxed);
    }
  });
  for (auto& [key, p] : processes_) {
    if (!p.indexed()) continue;
    p.before.resize(p.present.size());
    RowIndex running = 0;
    for (std::size_t w = 0; w < p.present.size(); ++w) {
      p.before[w] = running;
      running += static_cast<RowIndex>(set_bits(p.present[w]));
    }
    p.heads.assign(running, kNone);
  }
  // 3. Each id's first row, then the rows that share an id with an earlier one, in row order:
  //    the found row of an id may change as they are met (below), as when every row was read in order.
  std::vector<RowIndex> later_rows;  // rows whose id an earlier row of the process has
  if (all_indexed && plan.count() > 1) {
    plan.run([&](std::size_t, std::size_t begin, std::size_t end) {
      ProcessOfRow process{api, processes_};
      for (std::size_t i = begin; i < end; ++i) {
        Process& p = process(i);
        std::atomic_ref<RowIndex> head(p.heads[p.rank(api.correlation_id[i])]);
        RowIndex seen = head.load(std::memory_order_relaxed);
        const auto row = static_cast<RowIndex>(i);
        while ((seen == kNone || row < seen) && !head.compare_exchange_weak(seen, row, std::memory_order_relaxed)) {
        }
      }
    });
    std::vector<std::vector<RowIndex>> chunk_later(plan.count());
    plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
      ProcessOfRow process{api, processes_};
      for (std::size_t i = begin; i < end; ++i) {
        const Process& p = process(i);
        if (p.heads[p.rank(api.correlation_id[i])] != i) chunk_later[c].push_back(static_cast<RowIndex>(i));
      }
    });
    for (const auto& chunk : chunk_later) later_rows.insert(later_rows.end(), chunk.begin(), chunk.end());
  } else {
    for (RowIndex i = 0; i < api.size(); ++i) {
      auto& p = process_of(i);
      const std::uint32_t id = api.correlation_id[i];
      RowIndex& head = p.indexed() ? p.heads[p.rank(id)] : p.sparse.try_emplace(id, kNone).first->second;
      if (head == kNone) head = i;
      else later_rows.push_back(i);
    }
  }
  for (const RowIndex i : later_rows) {
    auto& p = process_of(i);
    const std::uint32_t id = api.correlation_id[i];
    // Id 0 is "none" (CUPTI numbers from 1; the Kineto reader writes 0 for a missing id): rows
    // without an id are not one call, and joining them all would multiply GPU ops by their number.
    if (id == 0) continue;
    RowIndex& head = p.indexed() ? p.heads[p.rank(id)] : p.sparse.find(id)->second;
    // A second row with the id: the enclosing one (the outer call) becomes the found row.
    if (encloses(api, i, head) && !encloses(api, head, i)) {
      auto node = more_.extract(head);
      auto& others = more_[i];
      others.push_back(head);
      if (!node.empty()) others.insert(others.end(), node.mapped().begin(), node.mapped().end());
      std::sort(others.begin(), others.end());
      head = i;
    } else {
      more_[head].push_back(i);
    }
  }
}

const ApiLookup::Process* ApiLookup::process(std::int64_t global_pid) const {
  if (single_) return global_pid == single_key_ ? single_ : nullptr;
  auto it = processes_.find(global_pid);
  return it == processes_.end() ? nullptr : &it->second;
}

std::optional<RowIndex> ApiLookup::find(std::int64_t global_pid, std::uint32_t correlation_id) const {
  const Process* p = process(global_pid);
  if (!p) return std::nullopt;
  const RowIndex* head = p->head(correlation_id);
  if (!head || *head == kNone) return std::nullopt;
  return *head;
}

bool ApiLookup::is_repeat(RowIndex row, const StringPool& strings) const {
  if (more_.empty()) return false;
  // Decided once for every row that is not its id's found row (the only rows that can repeat one):
  // those sharing an id with it (more_) and those without an id (id 0 is joined to nothing, but a
  // row without an id can still lie inside one of the same name). Callers ask about every call.
  std::call_once(repeat_once_, [&] {
    repeat_.assign(api_.size(), false);
    auto decide = [&](RowIndex r) {
      const auto head = find(process_key(api_.global_tid[r]), api_.correlation_id[r]);
      if (!head || *head == r) return;
      repeat_[r] = api_.global_tid[*head] == api_.global_tid[r] && encloses(api_, *head, r) &&
                   api_base_name(strings.get(api_.name[*head])) == api_base_name(strings.get(api_.name[r]));
    };
    for (const auto& [head, others] : more_) {
      for (const RowIndex r : others) decide(r);
    }
    for (RowIndex r = 0; r < api_.size(); ++r) {
      if (api_.correlation_id[r] == 0) decide(r);
    }
  });
  return repeat_[row];
}

}  // namespace kernscope::report
