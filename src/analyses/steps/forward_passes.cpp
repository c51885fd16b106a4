#include "analyses/steps/forward_passes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ranges>
#include <map>
#include <numeric>
#include <unordered_map>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/steps/thread_on_cpu.hpp"
#include "analyses/tail.hpp"
#include "analyses/trace_context.hpp"
#include "base/parallel_chunks.hpp"

namespace kernscope::report {

BusiestProcess busiest_process_kernels(const Trace& trace) {
  const auto& k = trace.kernels;
  BusiestProcess out;
  if (k.size() == 0) return out;
  // Over chunks of the kernels on several threads (the first pass of the step windows, on report's
  // longest chain). Kernels come in long runs of one process: its count is looked up once per run.
  const ChunkPlan plan(k.size(), std::size_t{1} << 16);
  std::vector<std::unordered_map<std::int64_t, std::size_t>> chunk_counts(plan.count());
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end;) {
      std::size_t j = i + 1;
      while (j < end && k.global_pid[j] == k.global_pid[i]) ++j;
      chunk_counts[c][k.global_pid[i]] += j - i;
      i = j;
    }
  });
  std::unordered_map<std::int64_t, std::size_t> per_process;
  for (const auto& counts : chunk_counts) {
    for (const auto& [pid, n] : counts) per_process[pid] += n;
  }
  const auto busiest = std::max_element(per_process.begin(), per_process.end(), [](auto& a, auto& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  });
  out.global_pid = busiest->first;
  out.processes = per_process.size();
  if (busiest->second == k.size()) {
    // One process (most traces): every row, in row order.
    out.order.resize(k.size());
    std::iota(out.order.begin(), out.order.end(), RowIndex{0});
  } else {
    out.order.reserve(busiest->second);
    for (RowIndex i = 0; i < k.size(); ++i) {
      if (k.global_pid[i] == out.global_pid) out.order.push_back(i);
    }
  }
  // Exports list kernels in start order: sorted again only where they are not.
  const auto earlier = [&](RowIndex a, RowIndex b) { return k.start_ns[a] < k.start_ns[b]; };
  const bool in_order = in_order_in_chunks(out.order.size(), std::size_t{1} << 16,
                                           [&](std::size_t p, std::size_t q) { return earlier(out.order[p], out.order[q]); });
  if (!in_order) std::stable_sort(out.order.begin(), out.order.end(), earlier);
  return out;
}

namespace {

struct Start {
  TimeNs time = 0;
  std::int64_t global_tid = 0;  // 0: a start in GPU time
  // Where the pass's own work is over on the same clock (its sampling kernel's launch or end, its
  // module call's end): a gap between requests can only come after it. A quiet stretch inside a
  // pass (a first call's lazy set-up, Python work before the sampling) is the pass's own time.
  TimeNs done = 0;
};

// The thread that launched most of the process's kernels, and each kernel's launch (host) time on
// it (0 where the launch is not traced or came from another thread).
class Launches {
 public:
  Launches(const TraceContext& context, const BusiestProcess& process) : context_(context), process_(process) {}
  std::int64_t global_tid = 0;
  std::size_t size() const { return process_.order.size(); }
  // When the kernel at position p of the launch order was launched by that thread (0: not by it).
  // Looked up when asked, not kept for every kernel (8 bytes a kernel; a pass over millions where
  // only the passes' first and last kernels are asked).
  TimeNs launch_ns(std::size_t p) const {
    if (global_tid == 0) return 0;
    const auto& api = context_.trace().api_calls;
    const auto r = context_.kernel_launch(process_.order[p]);
    return r && api.global_tid[*r] == global_tid ? api.start_ns[*r] : 0;
  }

 private:
  const TraceContext& context_;
  const BusiestProcess& process_;
};

Launches launching_thread(const TraceContext& context, const BusiestProcess& process) {
  const Trace& trace = context.trace();
  const auto& api = trace.api_calls;
  // Kernels per launching thread. A thread launches long runs of kernels: each run is counted with
  // one hash lookup, not one per kernel (a decode trace holds millions of kernels).
  std::unordered_map<std::int64_t, std::size_t> per_thread;
  std::int64_t run_tid = 0;
  std::size_t run = 0;
  const auto count_run = [&] {
    if (run) per_thread[run_tid] += run;
    run = 0;
  };
  for (const RowIndex i : process.order) {
    if (auto r = context.kernel_launch(i)) {
      if (api.global_tid[*r] != run_tid) {
        count_run();
        run_tid = api.global_tid[*r];
      }
      ++run;
    }
  }
  count_run();
  Launches out(context, process);
  if (per_thread.empty()) return out;
  const auto best = std::max_element(per_thread.begin(), per_thread.end(), [](auto& a, auto& b) { return a.second < b.second; });
  out.global_tid = best->first;
  return out;
}

// What the host thread (or, for GPU-time steps, the process's GPU) was doing, as intervals sorted
// by (start, end): its CUDA API calls, or the process's kernels. Rows of the table, read through its
// columns: 4 bytes an interval, where a copy of the times took 16 (64 MB for a thread making 4 M calls).
// Where every row of the table is the thread's (or process's) and the table is already in that order
// (one launching thread: most traces), position p is row p and no list is kept (16 MB and two passes
// over the 4 M calls of a 300 MB generate() export).
class Activity {
 public:
  Activity(const Trace& trace, std::int64_t global_tid, std::int64_t global_pid) {
    const bool calls = global_tid != 0;
    start_ = calls ? &trace.api_calls.start_ns : &trace.kernels.start_ns;
    end_ = calls ? &trace.api_calls.end_ns : &trace.kernels.end_ns;
    const auto& owner = calls ? trace.api_calls.global_tid : trace.kernels.global_pid;
    const std::int64_t who = calls ? global_tid : global_pid;
    // The passes over the table (4.1 M calls on a 300 MB generate() export) run in chunks on
    // several threads: this is on report's longest chain (the step windows).
    const ChunkPlan plan(owner.size(), std::size_t{1} << 18);
    std::vector<std::size_t> theirs_in(plan.count(), 0);
    std::vector<char> sorted_in(plan.count(), 1);
    const auto table_earlier = [&](std::size_t p, std::size_t q) { return at(static_cast<RowIndex>(p)) < at(static_cast<RowIndex>(q)); };
    plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) theirs_in[c] += owner[i] == who;
      sorted_in[c] = in_order_from(begin, end, table_earlier);
    });
    const std::size_t theirs = std::accumulate(theirs_in.begin(), theirs_in.end(), std::size_t{0});
    size_ = theirs;
    const bool in_order = std::all_of(sorted_in.begin(), sorted_in.end(), [](char c) { return c != 0; });
    if (theirs != owner.size() || !in_order) {
      rows_ = gather_in_chunks<RowIndex>(plan, [&](std::size_t begin, std::size_t end, auto&& emit) {
        for (std::size_t i = begin; i < end; ++i) {
          if (owner[i] == who) emit(static_cast<RowIndex>(i));
        }
      });
      // Exports list a thread's calls in start order already: sorted only where they are not.
      const auto earlier = [&](RowIndex a, RowIndex b) { return at(a) < at(b); };
      if (!in_order_in_chunks(rows_.size(), std::size_t{1} << 18, [&](std::size_t p, std::size_t q) { return earlier(rows_[p], rows_[q]); })) {
        std::sort(rows_.begin(), rows_.end(), earlier);
      }
    }
    // Each whole block's latest end, then the running latest over the blocks.
    latest_end_.resize(size_ / kBlock);
    const ChunkPlan blocks(latest_end_.size(), std::size_t{1} << 12);
    blocks.run([&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t b = begin; b < end; ++b) {
        TimeNs latest = std::numeric_limits<TimeNs>::min();
        for (std::size_t p = b * kBlock; p < (b + 1) * kBlock; ++p) latest = std::max(latest, (*end_)[row(p)]);
        latest_end_[b] = latest;
      }
    });
    for (std::size_t b = 1; b < latest_end_.size(); ++b) latest_end_[b] = std::max(latest_end_[b], latest_end_[b - 1]);
  }
  std::size_t size() const { return size_; }
  // The interval at position p: (start, end).
  std::pair<TimeNs, TimeNs> operator[](std::size_t p) const { return at(row(p)); }
  // The latest end of the intervals before position p (any of them may run past a later start: a
  // kernel on another stream, an outer call), the minimum time where there are none.
  TimeNs latest_end_before(std::size_t p) const {
    TimeNs latest = p >= kBlock ? latest_end_[p / kBlock - 1] : std::numeric_limits<TimeNs>::min();
    for (std::size_t q = p / kBlock * kBlock; q < p; ++q) latest = std::max(latest, (*end_)[row(q)]);
    return latest;
  }
  // The first position whose interval is not before (t, e), ordered by start, then end.
  std::size_t lower_bound(TimeNs t, TimeNs e) const {
    const auto positions = std::views::iota(std::size_t{0}, size_);
    return static_cast<std::size_t>(
        std::ranges::partition_point(positions, [&](std::size_t p) { return (*this)[p] < std::pair(t, e); }) - positions.begin());
  }

 private:
  std::pair<TimeNs, TimeNs> at(RowIndex r) const { return {(*start_)[r], (*end_)[r]}; }
  RowIndex row(std::size_t p) const { return rows_.empty() ? static_cast<RowIndex>(p) : rows_[p]; }
  static constexpr std::size_t kBlock = 64;
  const std::vector<TimeNs>* start_ = nullptr;
  const std::vector<TimeNs>* end_ = nullptr;
  std::size_t size_ = 0;
  std::vector<RowIndex> rows_;    // position -> row; empty where they are equal
  std::vector<TimeNs> latest_end_;  // per whole block of kBlock positions: the latest end up to its last
};

struct Gap {
  TimeNs start = 0, end = 0;
  std::int64_t length() const { return end - start; }
};

// A quiet stretch [a, b) of the activity in which the thread was still working on a CPU (`cpu`:
// where the trace says so) is host work, not a pause.
bool host_worked(const ThreadOnCpu* cpu, TimeNs a, TimeNs b) { return cpu != nullptr && cpu->mostly_busy(a, b); }

// The longest stretch inside [lo, hi) with no activity (and, where known, the thread off its CPU).
Gap longest_gap(const Activity& busy, TimeNs lo, TimeNs hi, const ThreadOnCpu* cpu) {
  Gap best;
  TimeNs reach = lo;
  std::size_t p = busy.lower_bound(lo, std::numeric_limits<TimeNs>::min());
  // Intervals that began before lo may still run into the window: any of them, not only the last.
  reach = std::max(reach, busy.latest_end_before(p));
  for (; p < busy.size() && busy[p].first < hi; ++p) {
    const auto [start, end] = busy[p];
    if (start > reach && start - reach > best.length() && !host_worked(cpu, reach, start)) best = {reach, start};
    reach = std::max(reach, end);
  }
  if (hi > reach && hi - reach > best.length() && !host_worked(cpu, reach, hi)) best = {reach, hi};
  return best;
}

// Where the request holding a step that starts at `anchor` began: the first activity after the
// last gap longer than `gap` before it, if that lies within `reach` of the anchor (else the anchor).
TimeNs request_start(const Activity& busy, TimeNs anchor, std::int64_t gap, std::int64_t reach,
                     TimeNs not_before, const ThreadOnCpu* cpu = nullptr) {
  std::size_t p = busy.lower_bound(anchor, std::numeric_limits<TimeNs>::min());
  TimeNs earliest = anchor;
  while (p > 0) {
    const auto [start, end] = busy[--p];
    if (end < earliest - gap && !host_worked(cpu, end, earliest)) return earliest;  // the gap before the request
    earliest = std::min(earliest, start);
    if (earliest < anchor - reach || earliest < not_before) return anchor;
  }
  return earliest;  // nothing before it in the trace: the request began with the trace's first activity
}

// Steps from their starts: each runs until the next starts, except across a gap between requests.
// `busy`: the Activity of the starts' thread (or process, for GPU-time starts). Where the trace knows
// when that thread was on a CPU, a quiet stretch in which it kept working is not a gap, and a request
// starts where its thread woke from the gap (its Python set-up before the first CUDA call included).
StepWindows windows_from_starts(const Trace& trace, const Activity& busy, const std::vector<Start>& starts,
                                std::int64_t global_pid, const std::string& name) {
  StepWindows out;
  const bool host = starts.front().global_tid != 0;
  const ThreadOnCpu on_cpu(trace, host ? starts.front().global_tid : 0);
  const ThreadOnCpu* cpu = host && on_cpu.known() ? &on_cpu : nullptr;
  std::vector<std::int64_t> sorted;  // the spacing of the starts
  for (std::size_t j = 1; j < starts.size(); ++j) sorted.push_back(starts[j].time - starts[j - 1].time);
  std::sort(sorted.begin(), sorted.end());
  const auto median = static_cast<std::int64_t>(percentile_linear(sorted, 50));
  // The last step ends where its activity ends, within two median steps of its start.
  TimeNs last_end = starts.back().time;
  for (std::size_t p = busy.lower_bound(starts.back().time, 0); p < busy.size() && busy[p].first <= starts.back().time + 2 * median; ++p) {
    last_end = std::max(last_end, std::min(busy[p].second, starts.back().time + 2 * median));
  }
  std::vector<TimeNs> begin(starts.size()), end(starts.size());
  std::vector<Gap> gaps(starts.size());
  std::vector<std::int64_t> gap_lengths;
  for (std::size_t j = 0; j < starts.size(); ++j) {
    begin[j] = starts[j].time;
    end[j] = j + 1 < starts.size() ? starts[j + 1].time : last_end;
    gaps[j] = longest_gap(busy, std::clamp(starts[j].done, begin[j], end[j]), end[j], cpu);
    gap_lengths.push_back(gaps[j].length());
  }
  std::sort(gap_lengths.begin(), gap_lengths.end());
  // A gap between requests: far longer than the longest quiet stretch inside a usual step.
  const std::int64_t threshold = std::max<std::int64_t>(1'000'000, 4 * static_cast<std::int64_t>(percentile_linear(gap_lengths, 50)));
  std::size_t cut = 0;
  std::int64_t cut_ns = 0;
  std::vector<bool> first_of_request(starts.size(), false);
  first_of_request[0] = true;
  for (std::size_t j = 0; j < starts.size(); ++j) {
    if (gaps[j].length() <= threshold) continue;
    ++cut;
    cut_ns += gaps[j].length();
    end[j] = gaps[j].start;
    if (j + 1 < starts.size()) first_of_request[j + 1] = true;
  }
  std::size_t woke = 0;
  for (std::size_t j = 0; j < starts.size(); ++j) {
    if (!first_of_request[j]) continue;
    const TimeNs not_before = j > 0 ? end[j - 1] : 0;
    // After a gap the walk back stops at that gap; where the thread's CPU shows what a quiet stretch
    // was, the set-up may be longer than a pass. Before the first request (the program's start-up
    // beside it) the walk keeps within a pass of the first one.
    const bool after_gap = cpu != nullptr && j > 0;
    begin[j] = request_start(busy, starts[j].time, threshold, after_gap ? std::numeric_limits<std::int64_t>::max() / 2 : median, not_before, cpu);
    // Back to where the thread woke from the gap before it, where it worked for the gap threshold or
    // longer (1 ms at least, the CPU clocks' resolution) before its first CUDA call after the gap
    // (generate()'s set-up when the input is already on the GPU). A shorter run is below what the
    // clocks resolve, and the first call marks the start. Not the first request: what the thread did
    // before it (the program's start-up, a warm-up's CUDA calls) is no request's.
    if (!after_gap) continue;
    if (auto w = cpu->woke_before(begin[j], threshold, not_before); w && *w + threshold <= begin[j]) {
      begin[j] = *w;
      ++woke;
    }
  }
  std::int32_t request = -1;
  for (std::size_t j = 0; j < starts.size(); ++j) {
    request += first_of_request[j] ? 1 : 0;
    out.windows.push_back({name, begin[j], std::max(begin[j], end[j]), starts[j].global_tid, Phase::kUnknown, process_key(global_pid), request});
  }
  out.request_gap_ns = threshold;
  if (cut > 0) {
    out.method = fmt::format("; {} gap(s) between requests (no {} for over {:.3f} ms, {:.3f} ms in all) lie between steps", cut,
                             !host ? "GPU work" : cpu ? "CUDA call on the thread, and the thread off its CPU," : "CUDA call on the thread",
                             static_cast<double>(threshold) / 1e6, static_cast<double>(cut_ns) / 1e6);
  }
  if (woke > 0) {
    out.method += fmt::format("; {} request(s) start where their thread woke ({}), their set-up before the first CUDA call included",
                              woke, thread_cpu_source(trace));
  }
  return out;
}

// Which passes share a request, from the Python calls: two consecutive passes are of one request
// when the innermost call holding both (a decoding loop: generate()'s _sample) holds no other pair's
// innermost call inside it; a pair held only by an outer call that also holds such loops (the
// program's main loop around generate()) straddles two requests. Gaps cannot tell a pause inside a
// request (a cold first call's) from one between requests; the calls can. Where the calls hold the
// passes in no such way, the gaps' requests stay.
void requests_from_calls(const std::vector<const IndexedRange*>& calls, const std::vector<TimeNs>& anchors,
                         std::vector<StepWindow>& windows) {
  if (anchors.size() != windows.size() || anchors.size() < 2) return;
  // One sweep over the calls (properly nested on one thread) keeps the chain of calls open at each
  // pass's start; the innermost call holding passes j and j + 1 is the deepest of j's chain that
  // is still open at j + 1's start.
  std::vector<const IndexedRange*> common(anchors.size() - 1, nullptr);  // per pair (j, j + 1)
  std::vector<const IndexedRange*> open;
  auto next_call = calls.begin();
  for (std::size_t j = 0; j + 1 < anchors.size(); ++j) {
    for (; next_call != calls.end() && (*next_call)->start_ns <= anchors[j]; ++next_call) {
      while (!open.empty() && open.back()->end_ns < (*next_call)->start_ns) open.pop_back();
      open.push_back(*next_call);
    }
    while (!open.empty() && open.back()->end_ns < anchors[j]) open.pop_back();
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      if ((*it)->end_ns >= anchors[j] && (*it)->end_ns >= anchors[j + 1]) {
        common[j] = *it;
        break;
      }
    }
    if (!common[j]) return;
  }
  // A pair straddles two requests when another pair's innermost call lies inside its own.
  std::vector<const IndexedRange*> distinct = common;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::unordered_map<const IndexedRange*, bool> outer;
  for (const auto* c : distinct) {
    outer[c] = std::any_of(distinct.begin(), distinct.end(), [&](const IndexedRange* d) {
      return d != c && d->start_ns >= c->start_ns && d->end_ns <= c->end_ns;
    });
  }
  std::vector<bool> straddles(common.size(), false);
  for (std::size_t p = 0; p < common.size(); ++p) straddles[p] = outer[common[p]];
  std::int32_t request = 0;
  windows[0].request = 0;
  for (std::size_t j = 1; j < windows.size(); ++j) {
    request += straddles[j - 1] ? 1 : 0;
    windows[j].request = request;
  }
}

// Where the profiler recorded Python calls: a request starts where the innermost Python call
// holding all its passes starts (generate(), an engine's step function), when that call began after
// the previous request's last step: its set-up before its first CUDA call is the request's time,
// which the user's TTFT counts. `cuda`: the Activity of the thread. Returns how many requests were moved.
std::size_t start_requests_at_callers(const Trace& trace, const std::vector<IndexedRange>& ranges, std::int64_t thread,
                                      const Activity& cuda, std::int64_t request_gap,
                                      const std::vector<TimeNs>& anchors, std::vector<StepWindow>& windows) {
  std::vector<const IndexedRange*> calls;
  for (const auto& r : ranges) {
    if (r.global_tid != thread || trace.nvtx.domain_id[r.row] != kKinetoPythonDomain) continue;
    if (std::string_view(r.name).substr(r.name.find(':') + 1).starts_with("nn.Module: ")) continue;
    calls.push_back(&r);
  }
  std::sort(calls.begin(), calls.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  requests_from_calls(calls, anchors, windows);
  std::size_t moved = 0;
  for (std::size_t first = 0; first < windows.size();) {
    std::size_t last = first;
    while (last + 1 < windows.size() && windows[last + 1].request == windows[first].request) ++last;
    const TimeNs previous_end = first > 0 ? windows[first - 1].end : std::numeric_limits<TimeNs>::min();
    // The holder must also hold the request's set-up: its CUDA calls before its first pass (generate()
    // launches a few before its first forward), back to the last gap between requests. Else the
    // model's own call wrappers, or the decoding loop inside generate(), would pass for the request.
    const TimeNs setup = request_start(cuda, windows[first].start, request_gap, std::numeric_limits<std::int64_t>::max() / 2,
                                       first > 0 ? previous_end : std::numeric_limits<TimeNs>::min() / 2);
    const TimeNs next_request = last + 1 < windows.size() ? windows[last + 1].start : std::numeric_limits<TimeNs>::max();
    const IndexedRange* holder = nullptr;
    const auto lo = std::lower_bound(calls.begin(), calls.end(), previous_end, [](auto* r, TimeNs t) { return r->start_ns < t; });
    for (auto it = lo; it != calls.end() && (*it)->start_ns <= setup; ++it) {
      const IndexedRange* r = *it;
      if (r->end_ns < windows[last].start) continue;  // does not hold every pass of the request
      if (r->end_ns > next_request) continue;         // holds the next request's too (the program's main loop)
      if (!holder || r->start_ns > holder->start_ns) holder = r;  // the innermost: the latest start
    }
    if (holder && holder->start_ns < windows[first].start) {
      windows[first].start = holder->start_ns;
      ++moved;
    }
    first = last + 1;
  }
  return moved;
}

std::string shortened(std::string_view name) {
  std::string s(name);
  if (s.size() > 60) s = s.substr(0, 59) + "\xE2\x80\xA6";
  return s;
}

// When each pass's sampled token reached the host: the first device-to-host copy of the process
// that starts on the GPU after the pass's sampling kernel ends (and before the next pass's sampling
// ends), at the later of its GPU end and its call's return where the call is traced. Per pass in
// `sampling_rows` (kernel rows); 0 where no such copy is seen.
std::vector<TimeNs> token_arrivals(const TraceContext& context, std::int64_t global_pid, const std::vector<RowIndex>& sampling_rows) {
  const Trace& trace = context.trace();
  const auto& m = trace.memcpys;
  const auto& k = trace.kernels;
  std::vector<std::pair<TimeNs, RowIndex>> d2h;  // GPU start, row
  for (RowIndex i = 0; i < m.size(); ++i) {
    if (m.global_pid[i] == global_pid && m.copy_kind[i] == 2) d2h.push_back({m.start_ns[i], i});
  }
  std::sort(d2h.begin(), d2h.end());
  std::vector<TimeNs> out(sampling_rows.size(), 0);
  for (std::size_t j = 0; j < sampling_rows.size(); ++j) {
    const TimeNs sampled = k.end_ns[sampling_rows[j]];
    const TimeNs next = j + 1 < sampling_rows.size() ? k.end_ns[sampling_rows[j + 1]] : std::numeric_limits<TimeNs>::max();
    auto it = std::lower_bound(d2h.begin(), d2h.end(), std::pair<TimeNs, RowIndex>{sampled, 0});
    if (it == d2h.end() || it->first >= next) continue;
    TimeNs arrived = m.end_ns[it->second];
    if (auto call = context.api_lookup().find(global_pid, m.correlation_id[it->second])) {
      arrived = std::max(arrived, trace.api_calls.end_ns[*call]);
    }
    out[j] = arrived;
  }
  return out;
}

}  // namespace

std::optional<StepWindows> forward_passes_from_modules(const TraceContext& context, const std::vector<IndexedRange>& ranges,
                                                       const BusiestProcess& process) {
  const Trace& trace = context.trace();
  constexpr std::string_view kModule = "nn.Module: ";
  const auto is_module = [&](const IndexedRange& r) {
    return trace.nvtx.domain_id[r.row] == kKinetoPythonDomain && std::string_view(r.name).substr(r.name.find(':') + 1).starts_with(kModule);
  };
  // Most traces have no module calls (no profiler stacks): they pay one pass over the ranges.
  if (std::none_of(ranges.begin(), ranges.end(), is_module) || process.order.size() < 16) return std::nullopt;
  const Launches launches = launching_thread(context, process);
  if (launches.global_tid == 0) return std::nullopt;
  std::vector<const IndexedRange*> modules;
  for (const auto& r : ranges) {
    if (r.global_tid == launches.global_tid && is_module(r)) modules.push_back(&r);
  }
  if (modules.size() < 2) return std::nullopt;
  // The outermost module calls: sorted by start (longer first), a call inside the previous
  // outermost one is a submodule's.
  std::sort(modules.begin(), modules.end(), [](const IndexedRange* a, const IndexedRange* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
  });
  std::vector<const IndexedRange*> outermost;
  TimeNs reach = std::numeric_limits<TimeNs>::min();
  for (const auto* m : modules) {
    if (m->start_ns < reach) continue;
    outermost.push_back(m);
    reach = m->end_ns;
  }
  // The model: the outermost module whose calls launch the most kernels.
  std::vector<TimeNs> launch_times;
  for (std::size_t p = 0; p < launches.size(); ++p) {
    if (const TimeNs t = launches.launch_ns(p); t != 0) launch_times.push_back(t);
  }
  std::sort(launch_times.begin(), launch_times.end());
  std::unordered_map<std::string, std::size_t> inside;
  for (const auto* m : outermost) {
    inside[m->name] += static_cast<std::size_t>(std::lower_bound(launch_times.begin(), launch_times.end(), m->end_ns) -
                                                std::lower_bound(launch_times.begin(), launch_times.end(), m->start_ns));
  }
  const auto model = std::max_element(inside.begin(), inside.end(), [](auto& a, auto& b) { return a.second < b.second; });
  std::vector<Start> starts;
  for (const auto* m : outermost) {
    if (m->name == model->first) starts.push_back({m->start_ns, m->global_tid, m->end_ns});
  }
  // Calls of the model that launch most of the thread's kernels (not a helper module called twice).
  if (starts.size() < 2 || 2 * model->second < launch_times.size()) return std::nullopt;
  const Activity busy(trace, launches.global_tid, process.global_pid);  // the thread's CUDA calls, read once
  StepWindows out = windows_from_starts(trace, busy, starts, process.global_pid, "forward");
  std::vector<TimeNs> anchors;
  for (const auto& st : starts) anchors.push_back(st.time);
  const std::size_t from_callers = start_requests_at_callers(trace, ranges, launches.global_tid, busy, out.request_gap_ns, anchors, out.windows);
  out.request_starts_from_calls = from_callers > 0;
  const std::string text = model->first.substr(model->first.find(':') + 1);
  out.method = fmt::format("no step annotations: forward passes, each a call of the model's outermost module ('{}', {} calls "
                           "launching {} of the thread's {} kernels){}",
                           text, starts.size(), model->second, launch_times.size(), out.method);
  if (from_callers > 0) {
    out.method += fmt::format("; {} request(s) start where the Python call holding all their passes starts (e.g. generate())", from_callers);
  }
  out.source = StepSource::kForwardPasses;
  return out;
}

std::optional<StepWindows> forward_passes_from_markers(const TraceContext& context, const BusiestProcess& process) {
  const Trace& trace = context.trace();
  const auto& k = trace.kernels;
  if (process.order.size() < 16) return std::nullopt;
  // Launch positions of every embedding kernel, and of each sampling kernel name.
  std::vector<std::size_t> embedding;
  std::unordered_map<StringId, std::vector<std::size_t>> sampling;
  const auto& classes = context.class_names();
  const auto id_of = [&](std::string_view c) {
    return static_cast<std::uint32_t>(std::find(classes.begin(), classes.end(), c) - classes.begin());
  };
  const std::uint32_t embedding_class = id_of("embedding"), sampling_class = id_of("sampling");
  if (embedding_class == classes.size() || sampling_class == classes.size()) return std::nullopt;
  {
    // Over chunks of the launch order on several threads, each chunk's positions then joined in order.
    const ChunkPlan plan(process.order.size(), std::size_t{1} << 16);
    std::vector<std::vector<std::size_t>> chunk_embedding(plan.count());
    std::vector<std::vector<std::pair<StringId, std::size_t>>> chunk_sampling(plan.count());
    plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
      for (std::size_t p = begin; p < end; ++p) {
        const StringId name = k.demangled_name[process.order[p]];
        const std::uint32_t id = context.kernel_class_id(name);
        if (id == embedding_class) chunk_embedding[c].push_back(p);
        if (id == sampling_class) chunk_sampling[c].push_back({name, p});
      }
    });
    for (std::size_t c = 0; c < plan.count(); ++c) {
      embedding.insert(embedding.end(), chunk_embedding[c].begin(), chunk_embedding[c].end());
      for (const auto& [name, p] : chunk_sampling[c]) sampling[name].push_back(p);
    }
  }
  if (embedding.size() < 3) return std::nullopt;
  // The first embedding lookup at or after position p (embedding.size(): none).
  const auto embedding_from = [&](std::size_t p) {
    return static_cast<std::size_t>(std::lower_bound(embedding.begin(), embedding.end(), p) - embedding.begin());
  };
  struct Passes {
    StringId sampling = kNoString;
    std::vector<std::size_t> starts;  // launch positions: each pass's first embedding lookup
    std::vector<std::size_t> ends;    // and its sampling
  };
  std::optional<Passes> best;
  for (const auto& [name, s] : sampling) {
    if (s.size() < 3 || (best && s.size() >= best->starts.size() + 1)) continue;
    // One sampling per pass, the same number of kernels apart in most passes (within 10 %: an
    // eager MoE's expert loop launches a few more or fewer kernels as routing changes).
    std::vector<std::size_t> spacing;
    for (std::size_t j = 1; j < s.size(); ++j) spacing.push_back(s[j] - s[j - 1]);
    std::vector<std::size_t> sorted = spacing;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t median = sorted[sorted.size() / 2];
    const auto regular = std::count_if(spacing.begin(), spacing.end(), [&](std::size_t d) { return 10 * d >= 9 * median && 10 * d <= 11 * median; });
    if (median < 2 || 2 * static_cast<std::size_t>(regular) < spacing.size()) continue;
    // And spread over the whole run, not bunched: a kernel of some passes only (a router's top-k
    // that only prefills launch, twice a pass) is regular inside its bunches, but its mean spacing
    // is many times its median; the token sampler's mean spacing stays near a pass.
    if (2 * (s.back() - s.front()) > 3 * median * (s.size() - 1)) continue;
    // Each pass after the first starts at the first embedding lookup after the previous pass's
    // sampling, and holds its own sampling after it.
    Passes passes{name, {}, {}};
    std::size_t widest = 0;  // kernels from a pass's start to its sampling, at most
    bool whole = true;
    for (std::size_t j = 1; j < s.size() && whole; ++j) {
      const std::size_t e = embedding_from(s[j - 1] + 1);
      whole = e < embedding.size() && embedding[e] < s[j];
      if (whole) {
        passes.starts.push_back(embedding[e]);
        passes.ends.push_back(s[j]);
        widest = std::max(widest, s[j] - embedding[e]);
      }
    }
    if (!whole) continue;
    // The first pass: its first embedding lookup within twice the widest pass before its sampling
    // (none there: the trace began inside it, and it is left out).
    const std::size_t lookback = s[0] > 2 * widest ? s[0] - 2 * widest : 0;
    if (const std::size_t e = embedding_from(lookback); e < embedding.size() && embedding[e] < s[0]) {
      passes.starts.insert(passes.starts.begin(), embedding[e]);
      passes.ends.insert(passes.ends.begin(), s[0]);
    }
    if (passes.starts.size() < 3) continue;
    if (!best || passes.starts.size() < best->starts.size()) best = std::move(passes);
  }
  if (!best) return std::nullopt;
  const Launches launches = launching_thread(context, process);
  std::vector<Start> starts;
  const auto launched = [&](std::size_t p) { return launches.launch_ns(p) != 0; };
  const bool host = launches.global_tid != 0 && std::all_of(best->starts.begin(), best->starts.end(), launched) &&
                    std::all_of(best->ends.begin(), best->ends.end(), launched);
  std::unordered_map<StringId, std::size_t> start_names;
  for (std::size_t j = 0; j < best->starts.size(); ++j) {
    const std::size_t p = best->starts[j], q = best->ends[j];
    starts.push_back(host ? Start{launches.launch_ns(p), launches.global_tid, launches.launch_ns(q)}
                          : Start{k.start_ns[process.order[p]], 0, k.end_ns[process.order[q]]});
    ++start_names[k.demangled_name[process.order[p]]];
  }
  const StringId start_name = std::max_element(start_names.begin(), start_names.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  StepWindows out = windows_from_starts(trace, Activity(trace, starts.front().global_tid, process.global_pid), starts, process.global_pid, "forward");
  std::vector<RowIndex> sampling_rows;
  for (std::size_t q : best->ends) sampling_rows.push_back(process.order[q]);
  const std::vector<TimeNs> tokens = token_arrivals(context, process.global_pid, sampling_rows);
  for (std::size_t j = 0; j < out.windows.size(); ++j) {
    if (tokens[j] > out.windows[j].start && tokens[j] <= out.windows[j].end) out.windows[j].token_ns = tokens[j];
  }
  out.method = fmt::format("no step annotations: forward passes, each from the token embedding lookup ({}{}) through the token "
                           "sampling {} ({} passes; one sampling per pass, the embedding lookup first){}",
                           shortened(trace.strings.get(start_name)), start_names.size() > 1 ? " and others" : "",
                           shortened(trace.strings.get(best->sampling)), best->starts.size(), out.method);
  if (process.processes > 1) {
    out.method += fmt::format("; the busiest process ({}, {} of {} kernels)", pid_of(process.global_pid), process.order.size(), k.size());
  }
  out.source = StepSource::kForwardPasses;
  return out;
}

}  // namespace kernscope::report
