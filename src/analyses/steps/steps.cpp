// Steps and phases. A kernel belongs to the step whose range encloses its launching API call on
// the same thread; GPU busy time is the union of the process's GPU operations clipped to the step
// window (work launched earlier but still running counts as busy: the GPU is not idle).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <array>
#include <cstdio>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>
#include <set>
#include <numeric>
#include <span>
#include <unordered_map>

#include "kernscope/op_classes.hpp"
#include "analyses/steps/analyze_steps.hpp"
#include "base/stage_clock.hpp"
#include "analyses/nsys/api_lookup.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "analyses/steps/step_chunks.hpp"
#include "analyses/steps/step_phases.hpp"
#include "analyses/steps/step_latency.hpp"
#include "analyses/steps/step_windows.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/nsys/report_helpers.hpp"
#include "analyses/nsys/rows_in_start_order.hpp"
#include "base/parallel_chunks.hpp"
#include "base/text_util.hpp"
#include "model/api_roles.hpp"
#include "analyses/steps/host_profile.hpp"
#include "kernscope/steps.hpp"
#include "analyses/tail.hpp"
#include "base/text_pattern.hpp"

namespace kernscope {
namespace {

// Kernel time per step and class, kept by class number (TraceContext::kernel_class_id; one
// number past the kernel classes for whole-graph executions) in a short list per step, and
// written into the steps' class_ns maps once attributed: a string-keyed map per kernel was ~1 %
// of report's CPU on the 1 GB export. A class any operation reached keeps its key even at 0 ns, as
// the map's operator[] did.
class ClassTimes {
 public:
  ClassTimes(std::size_t steps, const TraceContext& context) : context_(context), by_step_(steps) {}
  std::uint32_t whole_graph() const { return static_cast<std::uint32_t>(context_.class_names().size()); }
  void add(std::size_t step, std::uint32_t id, std::int64_t ns) {
    auto& list = by_step_[step];
    for (auto& [c, total] : list) {
      if (c == id) {
        total += ns;
        return;
      }
    }
    list.emplace_back(id, ns);
  }
  // Adds another chunk's times (the same steps).
  void merge(const ClassTimes& other) {
    for (std::size_t w = 0; w < by_step_.size(); ++w) {
      for (const auto& [id, ns] : other.by_step_[w]) add(w, id, ns);
    }
  }
  // Each step's map is its own: steps in chunks on several threads (thousands of steps of a dozen
  // classes each are string-keyed map insertions on the steps' chain).
  void write(std::vector<Step>& steps) const {
    ChunkPlan(steps.size(), 256).run([&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t w = begin; w < end; ++w) {
        for (const auto& [id, ns] : by_step_[w]) {
          steps[w].class_ns[id == whole_graph() ? std::string(kWholeGraphClass) : context_.class_names()[id]] += ns;
        }
      }
    });
  }

 private:
  const TraceContext& context_;
  std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> by_step_;
};

// The window, among time-ordered windows, that was the last to start at or before a time: a
// cursor that remembers the last answer, since the times asked mostly ascend (calls of one thread,
// kernels in start order), so most answers cost a comparison or two instead of a binary search.
template <class StartOf>
class LastStartedCursor {
 public:
  LastStartedCursor(std::size_t count, StartOf start_of) : count_(count), start_of_(start_of) {}
  // The number of windows starting at or before t (the window is that number - 1; 0: none).
  std::size_t started_by(TimeNs t) {
    const bool here = (next_ == 0 || start_of_(next_ - 1) <= t) && (next_ == count_ || t < start_of_(next_));
    if (here) return next_;
    // A step or two ahead is common; farther or backwards, search.
    if (next_ < count_ && start_of_(next_) <= t && (next_ + 1 == count_ || t < start_of_(next_ + 1))) return ++next_;
    std::size_t lo = 0, hi = count_;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (start_of_(mid) <= t) lo = mid + 1;
      else hi = mid;
    }
    return next_ = lo;
  }

 private:
  std::size_t count_;
  StartOf start_of_;
  std::size_t next_ = 0;
};

// Union length of intervals clipped to [lo, hi]. `runs`: where each run of intervals already in
// start order begins (each table's rows come in start order): they are merged, not sorted again (a
// sort of every step's kernels cost more than the rest of the step's measure).
std::int64_t covered(std::vector<std::pair<TimeNs, TimeNs>>& spans, const std::vector<std::size_t>& runs, TimeNs lo, TimeNs hi) {
  const auto by_start = [](const std::pair<TimeNs, TimeNs>& a, const std::pair<TimeNs, TimeNs>& b) { return a.first < b.first; };
  for (std::size_t r = 1; r < runs.size(); ++r) {
    const auto middle = spans.begin() + static_cast<std::ptrdiff_t>(runs[r]);
    const auto last = r + 1 < runs.size() ? spans.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]) : spans.end();
    std::inplace_merge(spans.begin(), middle, last, by_start);
  }
  std::int64_t total = 0;
  TimeNs cur_start = 0, cur_end = 0;
  bool open = false;
  for (auto [s, e] : spans) {
    s = std::max(s, lo);
    e = std::min(e, hi);
    if (s >= e) continue;
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
    } else {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

// Intervals of several tables (start and end columns) found by time (RowsInStartOrder each).
class TablesInStartOrder {
 public:
  struct Table {
    const std::vector<TimeNs>* start;
    const std::vector<TimeNs>* end;
    const DictColumn<std::int64_t>* global_pid;
  };
  // only_pid > 0: only that process's rows (process_key packing) are found.
  TablesInStartOrder(std::span<const Table> tables, std::int64_t only_pid) : only_pid_(only_pid) {
    for (const Table& t : tables) searched_.push_back({t, report::RowsInStartOrder(*t.start, *t.end)});
  }
  // Appends (start, end) of every interval with start < hi and end > lo: one run in start order per
  // table, each run's first position appended to `runs`.
  void overlapping(TimeNs lo, TimeNs hi, std::vector<std::pair<TimeNs, TimeNs>>& out, std::vector<std::size_t>& runs) const {
    for (const Searched& s : searched_) {
      runs.push_back(out.size());
      s.rows.for_each_overlapping(lo, hi, [&](RowIndex r) {
        if (only_pid_ > 0 && process_key((*s.table.global_pid)[r]) != only_pid_) return;
        out.push_back({(*s.table.start)[r], (*s.table.end)[r]});
      });
    }
  }

 private:
  struct Searched {
    Table table;
    report::RowsInStartOrder rows;
  };
  std::vector<Searched> searched_;
  std::int64_t only_pid_ = 0;
};

// Widens a step's GPU projection to hold one of its operations.
void project(Step& s, TimeNs start, TimeNs end) {
  if (s.gpu_end_ns == 0) {
    s.gpu_start_ns = start;
    s.gpu_end_ns = end;
    return;
  }
  s.gpu_start_ns = std::min(s.gpu_start_ns, start);
  s.gpu_end_ns = std::max(s.gpu_end_ns, end);
}

// What one chunk of rows adds to each step (the additive part of Step), merged into the steps
// once every chunk is done.
struct StepTally {
  std::int64_t kernels = 0, kernel_ns = 0, launches = 0, launch_api_ns = 0, syncs = 0, sync_ns = 0, allocations = 0;
  std::int64_t h2d_copies = 0, d2h_copies = 0, graph_launches = 0;
  TimeNs gpu_start_ns = 0, gpu_end_ns = 0;  // the projection, where any_gpu
  bool any_gpu = false;
};

// Widens a chunk's projection; its first operation sets it (a flag, not a sentinel end).
void project(StepTally& t, TimeNs start, TimeNs end) {
  if (!t.any_gpu) {
    t.gpu_start_ns = start;
    t.gpu_end_ns = end;
    t.any_gpu = true;
    return;
  }
  t.gpu_start_ns = std::min(t.gpu_start_ns, start);
  t.gpu_end_ns = std::max(t.gpu_end_ns, end);
}

void add_tally(Step& s, const StepTally& t) {
  s.kernels += t.kernels;
  s.kernel_ns += t.kernel_ns;
  s.launches += t.launches;
  s.launch_api_ns += t.launch_api_ns;
  s.syncs += t.syncs;
  s.sync_ns += t.sync_ns;
  s.allocations += t.allocations;
  s.h2d_copies += t.h2d_copies;
  s.d2h_copies += t.d2h_copies;
  s.graph_launches += t.graph_launches;
  if (t.any_gpu) project(s, t.gpu_start_ns, t.gpu_end_ns);
}

// The step window (of windows from host ranges on threads) that holds an API call. The chosen
// windows are the innermost ranges, so on one thread they do not nest: a call belongs to the last
// window of its thread starting at or before it, if that window also ends after it. A thread with
// no step windows of its own works for its process's steps (PyTorch's autograd engine launches the
// backward pass from its own thread while the step's range is open on the main thread; a loader
// thread's copies are the step's too): its calls belong to the process's window that encloses them
// (the latest-starting one where windows of several threads overlap). Calls come thread by thread,
// so the thread's windows are looked up once per run of one thread and followed with a cursor; a
// finder is used by one thread of work (each chunk copies one).
class CallStepFinder {
 public:
  using WindowLists = std::unordered_map<std::int64_t, std::vector<std::size_t>>;  // window numbers in start order
  CallStepFinder(const ApiCallColumns& a, const std::vector<report::StepWindow>& windows, const WindowLists& of_thread,
                 const WindowLists& of_process)
      : a_(a), windows_(windows), of_thread_(of_thread), of_process_(of_process), cursor_(0, StartOf{nullptr, &windows}) {}

  // The step of API call `i`, or -1.
  int operator()(RowIndex i) {
    if (a_.global_tid[i] != cached_tid_) {
      cached_tid_ = a_.global_tid[i];
      auto it = of_thread_.find(cached_tid_);
      own_windows_ = it != of_thread_.end();
      if (own_windows_) {
        ws_ = &it->second;
      } else {
        auto p = of_process_.find(process_key(cached_tid_));
        ws_ = p == of_process_.end() ? nullptr : &p->second;
      }
      cursor_ = LastStartedCursor<StartOf>(ws_ ? ws_->size() : 0, StartOf{ws_, &windows_});
    }
    if (!ws_) return -1;
    // A thread's own windows do not nest: only the last one can hold the call. The process's
    // windows may overlap: look back a few for one that holds it.
    std::size_t started = cursor_.started_by(a_.start_ns[i]);
    for (int look = own_windows_ ? 1 : 8; look > 0 && started > 0; --look) {
      const std::size_t w = (*ws_)[--started];
      if (a_.end_ns[i] <= windows_[w].end) return static_cast<int>(w);
    }
    return -1;
  }

 private:
  struct StartOf {
    const std::vector<std::size_t>* ws;
    const std::vector<report::StepWindow>* windows;
    TimeNs operator()(std::size_t p) const { return (*windows)[(*ws)[p]].start; }
  };
  const ApiCallColumns& a_;
  const std::vector<report::StepWindow>& windows_;
  const WindowLists& of_thread_;
  const WindowLists& of_process_;
  std::int64_t cached_tid_ = -1;
  const std::vector<std::size_t>* ws_ = nullptr;
  bool own_windows_ = false;
  LastStartedCursor<StartOf> cursor_;
};

}  // namespace

std::string step_group_name(std::string_view name) {
  // Engines name each step after its batch: SGLang "step[DECODE bs=32]" (the mode is the kind of
  // step, the batch size is not), vLLM "execute_260_context_1(256)_generation_4(4)" (counts of
  // tokens and requests): steps of one kind are one group whatever their batch, and the phase
  // (read from the name) keeps prefill, decode and mixed steps apart.
  static const auto kSglang = TextPattern::literal(R"(^(.*\bstep\[[A-Z_0-9]+)[ \]].*$)");
  static const auto kVllm = TextPattern::literal(R"(execute_(?:\d+_)?context_\d+(?:\([^)]*\))?_generation_\d+(?:\([^)]*\))?)");
  if (auto m = kSglang.match_whole(name)) return std::string(m->group(1)) + "]";
  if (auto m = kVllm.find(name)) {
    return std::string(name.substr(0, m->start())) + "execute_context_N_generation_N" + std::string(name.substr(m->end()));
  }
  const auto hash = name.rfind('#');
  if (hash == std::string_view::npos || hash + 1 == name.size() ||
      !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(hash) + 1, name.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::string(name);
  }
  return std::string(name.substr(0, hash + 1)) + "N";
}

Distribution distribution(std::vector<std::int64_t> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = static_cast<std::int64_t>(values.size());
  d.p50 = percentile_linear(values, 50);
  d.p95 = percentile_linear(values, 95);
  d.p99 = percentile_linear(values, 99);
  d.max = values.back();
  double sum = 0;
  for (auto v : values) sum += static_cast<double>(v);
  d.mean = sum / static_cast<double>(values.size());
  return d;
}

// How much of the GPU's kernel time between the first step's start and the last step's end the
// steps hold (kernels attributed to no step: work between steps, or of threads the steps do not
// cover). Said with the method; TPOT and TTFT are withheld from steps holding under half of it:
// they would describe a sliver of the run (a warm-up range, a helper's annotation) as its latency.
namespace {
// Forward passes found without annotations are one group; a first request far slower than the ones
// after it is a warm-up (cold caches, kernel autotuning, lazy initialisation: a first generate()
// call here took 40 ms a token against 4 ms after it). A request runs from a prefill to the next;
// where its steps' median wall is 3x or more the later steps', they become the group
// "warmup:<name>", so the steady state the headlines read (the last group of each phase) is the
// requests after it. Returns the words that say so, or nothing.
std::string name_warm_up_request(std::vector<Step>& steps) {
  std::vector<std::size_t> order(steps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return steps[a].start_ns < steps[b].start_ns; });
  std::vector<std::int64_t> first, later;
  std::size_t prefills = 0;
  for (const std::size_t i : order) {
    prefills += steps[i].phase == Phase::kPrefill;
    (prefills <= 1 ? first : later).push_back(steps[i].wall_ns);
  }
  if (prefills < 2 || first.empty() || later.empty()) return {};
  const auto median = [](std::vector<std::int64_t> v) {
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[v.size() / 2]);
  };
  const double cold = median(first), warm = median(later);
  if (warm <= 0 || cold < 3 * warm) return {};
  for (std::size_t k = 0; k < first.size(); ++k) {
    Step& s = steps[order[k]];
    s.name = "warmup:" + s.name;
    s.group = step_group_name(s.name);
  }
  return fmt::format("; the first request is a warm-up ({} passes, step median {:.3f} ms, {:.1f}x the {:.3f} ms of the passes "
                     "after it): its steps are the group warmup:forward",
                     first.size(), cold / 1e6, cold / warm, warm / 1e6);
}

// A group's leading steps that each take kColdStep times the median of the rest or more are a
// warm-up (cuDNN's autotuning, compilation, allocations made once), named warmup:<name> so that
// the group's figures and the steady account are the steady steps' (a first step of 1.4 s decided
// the bottleneck of a 6-step ResNet trace whose steps take 0.16 s). At least kMinSteadySteps must
// remain, or there is no steady state to compare with.
constexpr double kColdStep = 5.0;
constexpr std::size_t kMinSteadySteps = 3;
std::string name_cold_leading_steps(std::vector<Step>& steps) {
  std::map<std::tuple<std::int64_t, std::string, Phase>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < steps.size(); ++i) groups[{steps[i].global_pid, steps[i].group, steps[i].phase}].push_back(i);
  std::size_t named = 0;
  double ratio = 0;
  for (auto& [key, members] : groups) {
    if (std::get<1>(key).find("warmup") != std::string::npos || members.size() < kMinSteadySteps + 1) continue;
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) { return steps[a].start_ns < steps[b].start_ns; });
    // The steady median: of the steps after the leading ones, found from the back.
    std::size_t lead = 0;
    while (lead + kMinSteadySteps < members.size()) {
      std::vector<std::int64_t> rest;
      for (std::size_t k = lead + 1; k < members.size(); ++k) rest.push_back(steps[members[k]].wall_ns);
      std::nth_element(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(rest.size() / 2), rest.end());
      const double median = static_cast<double>(rest[rest.size() / 2]);
      if (median <= 0 || static_cast<double>(steps[members[lead]].wall_ns) < kColdStep * median) break;
      ratio = std::max(ratio, static_cast<double>(steps[members[lead]].wall_ns) / median);
      ++lead;
    }
    for (std::size_t k = 0; k < lead; ++k) {
      Step& s = steps[members[k]];
      s.name = "warmup:" + s.name;
      s.group = step_group_name(s.name);
    }
    named += lead;
  }
  if (named == 0) return {};
  return fmt::format("; {} leading step(s) {:.1f}x or more the median of their group's others are a warm-up (group warmup:...)", named,
                     kColdStep);
}

void withhold_latency_of_thin_steps(const Trace& trace, StepAnalysis& result, const StepChunking& chunking) {
  if (result.steps.empty()) return;
  const auto& k = trace.kernels;
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
  std::set<std::int64_t> processes;  // the steps' processes (process_key); 0: any
  for (const auto& s : result.steps) {
    first = std::min(first, s.start_ns);
    last = std::max({last, s.end_ns, s.gpu_end_ns});
    processes.insert(s.global_pid);
  }
  // Over chunks of the kernels on several threads (a pass over every kernel at the end of the steps'
  // chain); a run of one process's kernels is looked up once.
  const bool any_process = processes.contains(0);
  const ChunkPlan plan(k.size(), chunking.min_rows, 0, chunking.cores);
  std::vector<std::pair<std::int64_t, std::int64_t>> per_chunk(plan.count(), {0, 0});  // inside, all
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
    auto& [inside, all] = per_chunk[c];
    std::int64_t run_pid = 0;
    bool run_theirs = false, have_run = false;
    for (std::size_t i = begin; i < end; ++i) {
      if (k.start_ns[i] < first || k.start_ns[i] >= last) continue;
      if (!any_process) {
        if (!have_run || k.global_pid[i] != run_pid) {
          run_pid = k.global_pid[i];
          run_theirs = processes.contains(process_key(run_pid));
          have_run = true;
        }
        if (!run_theirs) continue;  // another process's work
      }
      const std::int64_t ns = k.end_ns[i] - k.start_ns[i];
      all += ns;
      if (result.kernel_step[i] >= 0) inside += ns;
    }
  });
  std::int64_t inside = 0, all = 0;
  for (const auto& [in, a] : per_chunk) {
    inside += in;
    all += a;
  }
  if (all == 0) return;
  const double share = static_cast<double>(inside) / static_cast<double>(all);
  result.method += fmt::format("; the steps hold {:.1f} % of their processes' kernel time between the first's start and the last's end",
                               100.0 * share);
  if (share >= 0.5 || (result.tpot.count == 0 && result.ttft.count == 0)) return;
  result.tpot = {};
  result.ttft = {};
  result.tpot_samples.clear();
  result.ttft_samples.clear();
  result.notes.push_back({"latency_withheld", NoteSeverity::kInfo,
                          fmt::format("TPOT and TTFT withheld: the steps hold only {:.1f} % of the kernel time in their span, "
                                      "so their latency would not be the run's",
                                      100.0 * share)});
}
// The steps as the windows give them: name, group, phase, bounds, token, thread and process.
std::vector<Step> steps_of_windows(const std::vector<report::StepWindow>& windows) {
  std::vector<Step> steps(windows.size());
  for (std::size_t w = 0; w < windows.size(); ++w) {
    steps[w].name = windows[w].name;
    steps[w].group = step_group_name(windows[w].name);
    steps[w].phase = windows[w].phase;
    steps[w].start_ns = windows[w].start;
    steps[w].end_ns = windows[w].end;
    steps[w].token_ns = windows[w].token_ns;
    steps[w].global_tid = windows[w].global_tid;
    steps[w].global_pid = windows[w].global_pid != 0 ? windows[w].global_pid
                          : windows[w].global_tid != 0 ? process_key(windows[w].global_tid) : 0;
    steps[w].wall_ns = windows[w].end - windows[w].start;
  }
  return steps;
}

// GPU busy inside each window: all GPU operations (kernels, copies, sets, whole-graph executions)
// that overlap it. Each table is searched in start order where it is in start order already (as
// exports write them), through a sorted row order where it is not; no copy of the operations
// (a merged copy held 91 MiB of the 1 GB export's report, bench/RESULTS.md).
// When every step is one process's, only that process's GPU work makes it busy (another
// process's GPU in a multi-GPU trace is not this step's).
void measure_gpu_busy(const Trace& trace, const std::vector<report::StepWindow>& windows, std::vector<Step>& steps) {
  const auto& k = trace.kernels;
  std::int64_t busy_pid = -1;  // -1: not yet seen; 0: any process
  for (const auto& w : windows) {
    const std::int64_t p = w.global_pid != 0 ? w.global_pid : w.global_tid != 0 ? process_key(w.global_tid) : 0;
    busy_pid = busy_pid == -1 || busy_pid == p ? p : 0;
  }
  const std::array<TablesInStartOrder::Table, 4> tables = {{{&k.start_ns, &k.end_ns, &k.global_pid},
                                                             {&trace.memcpys.start_ns, &trace.memcpys.end_ns, &trace.memcpys.global_pid},
                                                             {&trace.memsets.start_ns, &trace.memsets.end_ns, &trace.memsets.global_pid},
                                                             {&trace.graph_execs.start_ns, &trace.graph_execs.end_ns, &trace.graph_execs.global_pid}}};
  const TablesInStartOrder in_order(tables, busy_pid > 0 ? busy_pid : 0);
  // Each step on its own: chunks of steps on several threads.
  ChunkPlan::balanced(steps.size(), 16).run([&](std::size_t, std::size_t begin, std::size_t end) {
    std::vector<std::pair<TimeNs, TimeNs>> inside;
    std::vector<std::size_t> runs;
    for (std::size_t w = begin; w < end; ++w) {
      Step& s = steps[w];
      inside.clear();
      runs.clear();
      in_order.overlapping(s.start_ns, s.end_ns, inside, runs);
      s.gpu_busy_ns = covered(inside, runs, s.start_ns, s.end_ns);
      s.gpu_idle_ns = s.wall_ns - s.gpu_busy_ns;
    }
  });
}

// Steps cut by a time or NVTX filter's edges, or by a capture window's, hold only part of their
// work: they are left out (and said) rather than reported as short steps that would distort TPOT.
void leave_out_cut_steps(const Trace& trace, std::vector<Step>& steps, std::vector<report::StepPhaseFacts>& phase_facts,
                         StepAnalysis& result) {
  if (trace.filter_window || !trace.capture_windows.empty()) {
    // The window decides (a range, or a period in GPU time): GPU work still running after a range
    // that lies inside the filter is the step's, kept by the filter when it started in it.
    const auto inside_filter = [&](const Step& step) {
      return !trace.filter_window || (step.start_ns >= trace.filter_window->first && step.end_ns <= trace.filter_window->second);
    };
    // A capture window records what is launched inside it: the step's window (its host range, or
    // its GPU period) must lie in one capture window.
    const auto inside_capture = [&](const Step& step) {
      if (trace.capture_windows.empty()) return true;
      for (const auto& w : trace.capture_windows) {
        const TimeNs close = w.end.value_or(std::numeric_limits<TimeNs>::max());
        if (step.start_ns >= w.start && step.end_ns <= close) return true;
      }
      return false;
    };
    std::vector<std::int32_t> new_index(steps.size(), -1);
    std::int32_t kept_count = 0;
    std::size_t cut_by_filter = 0, cut_by_capture = 0;
    for (std::size_t w = 0; w < steps.size(); ++w) {
      if (!inside_filter(steps[w])) {
        ++cut_by_filter;
        continue;
      }
      if (!inside_capture(steps[w])) {
        ++cut_by_capture;
        continue;
      }
      new_index[w] = kept_count++;
    }
    if (static_cast<std::size_t>(kept_count) != steps.size()) {
      std::vector<Step> kept;
      std::vector<report::StepPhaseFacts> kept_facts;
      for (std::size_t w = 0; w < steps.size(); ++w) {
        if (new_index[w] < 0) continue;
        kept.push_back(std::move(steps[w]));
        kept_facts.push_back(phase_facts[w]);
      }
      if (cut_by_filter > 0) {
        result.notes.push_back({"steps_cut_by_filter", NoteSeverity::kInfo,
                                std::to_string(cut_by_filter) +
                                    " step(s) cut by the filter's edges left out (only part of their work is inside it)",
                                static_cast<std::int64_t>(cut_by_filter)});
      }
      if (cut_by_capture > 0) {
        result.notes.push_back({"steps_cut_by_capture", NoteSeverity::kDataLoss,
                                std::to_string(cut_by_capture) +
                                    " step(s) cut by a capture window's edge left out as partial (only part of their work was recorded)",
                                static_cast<std::int64_t>(cut_by_capture)});
      }
      for (auto* column : {&result.kernel_step, &result.memcpy_step, &result.memset_step}) {
        for (auto& v : *column) v = v < 0 ? -1 : new_index[static_cast<std::size_t>(v)];
      }
      steps = std::move(kept);
      phase_facts = std::move(kept_facts);
    }
  }
}

// Each forward pass's distinct kernel names (of passes of a request), sorted. Over chunks of the
// kernels on several threads: one pass over every kernel on the steps' chain (1.5 M on the 300 MB
// generate() export, 0.03 s on one thread). A pass's kernels are mostly consecutive rows, so a chunk
// keeps one list per run of one step's rows, made distinct at the run's end; the runs are then
// joined in step order and each step's list made distinct again.
void collect_kernel_names(const KernelColumns& k, const std::vector<std::int32_t>& kernel_step,
                          std::vector<report::StepPhaseFacts>& phase_facts, const StepChunking& chunking) {
  struct Run {
    std::int32_t step;
    std::vector<StringId> names;
  };
  const auto distinct = [](std::vector<StringId>& names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  };
  const ChunkPlan plan(k.size(), chunking.min_rows, 0, chunking.cores);
  std::vector<std::vector<Run>> runs(plan.count());
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
    auto& mine = runs[c];
    for (std::size_t i = begin; i < end; ++i) {
      const std::int32_t w = kernel_step[i];
      if (w < 0 || phase_facts[static_cast<std::size_t>(w)].request < 0) continue;
      if (mine.empty() || mine.back().step != w) {
        if (!mine.empty()) distinct(mine.back().names);
        mine.push_back({w, {}});
      }
      mine.back().names.push_back(k.demangled_name[i]);
    }
    if (!mine.empty()) distinct(mine.back().names);
  });
  std::vector<bool> joined(phase_facts.size(), false);  // a step holding more than one run
  for (auto& chunk : runs) {
    for (auto& run : chunk) {
      auto& names = phase_facts[static_cast<std::size_t>(run.step)].kernel_names;
      joined[static_cast<std::size_t>(run.step)] = joined[static_cast<std::size_t>(run.step)] || !names.empty();
      names.insert(names.end(), run.names.begin(), run.names.end());
    }
  }
  for (std::size_t w = 0; w < phase_facts.size(); ++w) {
    if (joined[w]) distinct(phase_facts[w].kernel_names);
  }
}

}  // namespace

Result<StepAnalysis> analyze_steps(const Trace& trace, const OpRuleSet& rules, const StepOptions& options) {
  const TraceContext context(trace, rules);
  return analyze_steps(context, options);
}

Result<StepAnalysis> analyze_steps(const TraceContext& context, const StepOptions& options) {
  return analyze_steps_in_chunks(context, options, StepChunking{});
}

Result<StepAnalysis> analyze_steps_in_chunks(const TraceContext& context, const StepOptions& options, const StepChunking& chunking) {
  const Trace& trace = context.trace();
  if (!trace.has(EventKind::kKernels) && !trace.has(EventKind::kGraphExecs)) {
    return std::unexpected(report::no_data(trace, "CUDA kernel data"));
  }
  StepAnalysis result;
  const auto& k = trace.kernels;
  const auto& a = trace.api_calls;
  result.kernel_step.assign(k.size(), -1);
  result.memcpy_step.assign(trace.memcpys.size(), -1);
  result.memset_step.assign(trace.memsets.size(), -1);

  // 1. Step windows, from the most trustworthy source the trace offers (step_windows.hpp).
  auto found = report::find_step_windows(context, options);
  if (!found) return std::unexpected(found.error());
  const auto& windows = found->windows;
  result.method = found->method;
  stage_mark("step windows done");

  // 2. Attribute launches, API calls and GPU time to windows.
  std::vector<Step> steps = steps_of_windows(windows);
  auto class_id = [&](RowIndex i) { return context.kernel_class_id(k.demangled_name[i]); };
  ClassTimes class_times(windows.size(), context);
  // What the phase decision reads besides the steps' class times (step_phases.hpp).
  std::vector<report::StepPhaseFacts> phase_facts(windows.size());
  for (std::size_t w = 0; w < windows.size(); ++w) {
    phase_facts[w].global_tid = windows[w].global_tid;
    phase_facts[w].request = windows[w].request;
  }
  const bool thread_steps = !windows.empty() && windows[0].global_tid != 0;
  const report::ApiLookup& lookup = context.api_lookup();
  // What each call does (CUDA or HIP, any version): api_roles, once per name. A row that only
  // repeats another row's call (nsys's --cudabacktrace pairs) is not a call of its own.
  ApiRoleCache role_of_name(trace.strings);
  auto count_call = [&](auto& s, RowIndex i, ApiRoleCache& roles) {
    if (lookup.is_repeat(i, trace.strings)) return;
    const ApiRole role = roles(a.name[i]);
    const std::int64_t d = a.end_ns[i] - a.start_ns[i];
    if (has_any(role, kAnyLaunch)) { ++s.launches; s.launch_api_ns += d; }
    if (has_any(role, ApiRole::kSync)) { ++s.syncs; s.sync_ns += d; }
    if (has_any(role, kAllocOrFree)) ++s.allocations;
    if (has_any(role, ApiRole::kGraphLaunch)) ++s.graph_launches;
  };
  if (thread_steps) {
    // API calls inside steps (CallStepFinder); GPU operations belong to the step of the call that
    // launched them (by correlation id). No table of every call's step (one for the 13 M calls of
    // the 1 GB export held 50 MiB of its report): each is found when asked. The passes run over
    // chunks of rows on several threads, each adding to its own tallies, merged in step order.
    CallStepFinder::WindowLists windows_of_thread, windows_of_process;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      windows_of_thread[windows[w].global_tid].push_back(w);
      windows_of_process[process_key(windows[w].global_tid)].push_back(w);
    }
    auto by_start = [&](std::size_t x, std::size_t y) { return windows[x].start < windows[y].start; };
    for (auto& [tid, ws] : windows_of_thread) std::sort(ws.begin(), ws.end(), by_start);
    for (auto& [pid, ws] : windows_of_process) std::sort(ws.begin(), ws.end(), by_start);
    const CallStepFinder finder(a, windows, windows_of_thread, windows_of_process);
    // Chunks only while their tallies stay small (64 MiB in all): a trace with very many steps
    // makes fewer chunks.
    const std::size_t max_chunks = std::max<std::size_t>(1, (std::size_t{64} << 20) / std::max<std::size_t>(1, steps.size() * sizeof(StepTally)));
    auto over_chunks = [&](std::size_t rows, auto&& body) {
      const ChunkPlan plan(rows, chunking.min_rows, max_chunks, chunking.cores);
      std::vector<std::vector<StepTally>> tallies(plan.count());
      std::vector<ClassTimes> chunk_classes(plan.count(), ClassTimes(steps.size(), context));
      plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
        tallies[c].resize(steps.size());
        CallStepFinder step_of_call = finder;
        body(step_of_call, tallies[c], chunk_classes[c], static_cast<RowIndex>(begin), static_cast<RowIndex>(end));
      });
      for (std::size_t c = 0; c < plan.count(); ++c) {
        for (std::size_t w = 0; w < steps.size(); ++w) add_tally(steps[w], tallies[c][w]);
        class_times.merge(chunk_classes[c]);
      }
    };
    over_chunks(a.size(), [&](CallStepFinder& step_of_call, std::vector<StepTally>& tally, ClassTimes&, RowIndex begin, RowIndex end) {
      ApiRoleCache roles(trace.strings);
      for (RowIndex i = begin; i < end; ++i) {
        if (const int step = step_of_call(i); step >= 0) count_call(tally[static_cast<std::size_t>(step)], i, roles);
      }
    });
    // Each GPU operation in rows [begin, end) of `ops` goes to the step of the call that launched
    // it: `count` adds what is particular to its kind, then its span widens the step's projection.
    auto attribute = [&](CallStepFinder& step_of_call, std::vector<StepTally>& tally, const auto& ops, RowIndex begin,
                         RowIndex end, auto&& count) {
      for (RowIndex i = begin; i < end; ++i) {
        const auto call = context.launch_of(ops, i);
        const int step = call ? step_of_call(*call) : -1;
        if (step < 0) continue;
        StepTally& t = tally[static_cast<std::size_t>(step)];
        count(t, step, i);
        project(t, ops.start_ns[i], ops.end_ns[i]);
      }
    };
    over_chunks(k.size(), [&](CallStepFinder& step_of_call, std::vector<StepTally>& tally, ClassTimes& classes, RowIndex begin, RowIndex end) {
      attribute(step_of_call, tally, k, begin, end, [&](StepTally& t, int step, RowIndex i) {
        result.kernel_step[i] = step;
        const std::int64_t d = k.end_ns[i] - k.start_ns[i];
        ++t.kernels;
        t.kernel_ns += d;
        classes.add(static_cast<std::size_t>(step), class_id(i), d);
      });
    });
    // Whole-graph executions (graphs traced as units): GPU work of the step whose kernels are not
    // itemized, counted in its kernel time under a class of their own. Then copies and sets.
    const auto& gx = trace.graph_execs;
    const auto& m = trace.memcpys;
    over_chunks(m.size(), [&](CallStepFinder& step_of_call, std::vector<StepTally>& tally, ClassTimes&, RowIndex begin, RowIndex end) {
      attribute(step_of_call, tally, m, begin, end, [&](StepTally& t, int step, RowIndex i) {
        result.memcpy_step[i] = step;
        if (m.copy_kind[i] == 1) ++t.h2d_copies;
        if (m.copy_kind[i] == 2) ++t.d2h_copies;
      });
    });
    over_chunks(0, [&](CallStepFinder& step_of_call, std::vector<StepTally>& tally, ClassTimes& classes, RowIndex, RowIndex) {
      attribute(step_of_call, tally, gx, 0, static_cast<RowIndex>(gx.size()), [&](StepTally& t, int step, RowIndex i) {
        const std::int64_t d = gx.end_ns[i] - gx.start_ns[i];
        t.kernel_ns += d;
        classes.add(static_cast<std::size_t>(step), classes.whole_graph(), d);
      });
      attribute(step_of_call, tally, trace.memsets, 0, static_cast<RowIndex>(trace.memsets.size()),
                [&](StepTally&, int step, RowIndex i) { result.memset_step[i] = step; });
    });
  } else {
    // Windows in GPU time (found from the work, not from host ranges), disjoint and in time order:
    // a GPU operation of the windows' process belongs to the window its start falls in.
    const std::int64_t only_pid = windows.empty() ? 0 : windows[0].global_pid;
    auto mine = [&](std::int64_t global_pid) { return only_pid == 0 || process_key(global_pid) == only_pid; };
    auto window_of = [&](TimeNs t) -> Step* {
      auto it = std::upper_bound(steps.begin(), steps.end(), t, [](TimeNs x, const Step& st) { return x < st.start_ns; });
      if (it == steps.begin()) return nullptr;
      Step& st = *std::prev(it);
      return t < st.end_ns ? &st : nullptr;
    };
    // The host side of each step, so its calls are counted too: from the first call that launched
    // its GPU work until the next step's first launch (the last step: until its last launch; the
    // host may already be launching work that runs after the trace ends).
    std::vector<TimeNs> host_first(steps.size(), INT64_MAX), host_last(steps.size(), INT64_MIN);
    auto note_launch = [&](Step* st, std::int64_t global_pid, std::uint32_t correlation) {
      auto r = lookup.find(global_pid, correlation);
      if (!r) return;
      const auto w = static_cast<std::size_t>(st - steps.data());
      host_first[w] = std::min(host_first[w], a.start_ns[*r]);
      host_last[w] = std::max(host_last[w], a.end_ns[*r]);
    };
    // Each GPU operation of the process goes to the window it starts in: `count` adds what is
    // particular to its kind, then its span and its launching call are noted.
    auto attribute = [&](const auto& ops, auto&& count) {
      for (RowIndex i = 0; i < ops.size(); ++i) {
        if (!mine(ops.global_pid[i])) continue;
        Step* st = window_of(ops.start_ns[i]);
        if (!st) continue;
        count(*st, i);
        project(*st, ops.start_ns[i], ops.end_ns[i]);
        note_launch(st, ops.global_pid[i], ops.correlation_id[i]);
      }
    };
    attribute(k, [&](Step& st, RowIndex i) {
      result.kernel_step[i] = static_cast<std::int32_t>(&st - steps.data());
      ++st.kernels;
      st.kernel_ns += k.end_ns[i] - k.start_ns[i];
      class_times.add(static_cast<std::size_t>(&st - steps.data()), class_id(i), k.end_ns[i] - k.start_ns[i]);
    });
    const auto& gx = trace.graph_execs;
    attribute(gx, [&](Step& st, RowIndex i) {
      st.kernel_ns += gx.end_ns[i] - gx.start_ns[i];
      class_times.add(static_cast<std::size_t>(&st - steps.data()), class_times.whole_graph(), gx.end_ns[i] - gx.start_ns[i]);
    });
    const auto& m = trace.memcpys;
    attribute(m, [&](Step& st, RowIndex i) {
      result.memcpy_step[i] = static_cast<std::int32_t>(&st - steps.data());
      if (m.copy_kind[i] == 1) ++st.h2d_copies;
      if (m.copy_kind[i] == 2) ++st.d2h_copies;
    });
    attribute(trace.memsets, [&](Step& st, RowIndex i) {
      result.memset_step[i] = static_cast<std::int32_t>(&st - steps.data());
    });
    // Host bounds in step order; launches may be reordered across streams, so each bound is at
    // least the one before it.
    std::vector<std::pair<TimeNs, TimeNs>> host(steps.size(), {0, 0});  // [from, to); empty: none
    TimeNs floor = INT64_MIN;
    std::size_t previous = steps.size();
    for (std::size_t w = 0; w < steps.size(); ++w) {
      if (host_first[w] == INT64_MAX) continue;
      const TimeNs from = std::max(host_first[w], floor);
      if (previous < steps.size()) host[previous].second = from;
      host[w] = {from, std::max(host_last[w], from + 1)};
      floor = from;
      previous = w;
    }
    std::vector<std::size_t> hosted;
    std::size_t unlaunched = 0;  // steps with GPU work whose launching calls the trace lacks
    for (std::size_t w = 0; w < steps.size(); ++w) {
      if (host[w].second > host[w].first) hosted.push_back(w);
      unlaunched += host_first[w] == INT64_MAX && steps[w].gpu_end_ns != 0;
    }
    if (unlaunched > 0) {
      result.notes.push_back({"launches_not_traced", NoteSeverity::kDataLoss,
                              std::to_string(unlaunched) + " step(s) ran GPU work whose launching calls are not in the trace "
                                                           "(launched before its CUDA API rows begin): their launches, syncs and allocations read 0",
                              static_cast<std::int64_t>(unlaunched)});
    }
    if (!hosted.empty()) {
      for (RowIndex i = 0; i < a.size(); ++i) {
        if (only_pid != 0 && process_key(a.global_tid[i]) != only_pid) continue;
        auto it = std::upper_bound(hosted.begin(), hosted.end(), a.start_ns[i],
                                   [&](TimeNs t, std::size_t w) { return t < host[w].first; });
        if (it == hosted.begin()) continue;
        const std::size_t w = *std::prev(it);
        if (a.start_ns[i] < host[w].second) count_call(steps[w], i, role_of_name);
      }
    }
  }
  class_times.write(steps);
  for (auto& s : steps) s.gpu_span_ns = s.gpu_end_ns - s.gpu_start_ns;
  measure_gpu_busy(trace, windows, steps);
  leave_out_cut_steps(trace, steps, phase_facts, result);
  // 3. What the workload is (workload.hpp); prefill/decode phases only for LLM inference.
  WorkloadSignals signals;
  {
    // Kernel time by class over chunks of kernels (a class any kernel has keeps its key at 0 ns).
    const std::size_t classes = context.class_names().size();
    const ChunkPlan plan(k.size(), chunking.min_rows, 0, chunking.cores);
    std::vector<std::int64_t> ns(plan.count() * classes, 0);
    std::vector<char> seen(ns.size(), 0);
    plan.run([&](std::size_t chunk, std::size_t begin, std::size_t end) {
      std::int64_t* chunk_ns = ns.data() + chunk * classes;
      char* chunk_seen = seen.data() + chunk * classes;
      for (std::size_t i = begin; i < end; ++i) {
        const std::uint32_t c = class_id(static_cast<RowIndex>(i));
        chunk_ns[c] += k.end_ns[i] - k.start_ns[i];
        chunk_seen[c] = 1;
      }
    });
    for (std::size_t chunk = 0; chunk < plan.count(); ++chunk) {
      for (std::size_t c = 0; c < classes; ++c) {
        if (seen[chunk * classes + c]) signals.class_ns[context.class_names()[c]] += ns[chunk * classes + c];
      }
    }
  }
  for (RowIndex i = 0; i < trace.graph_execs.size(); ++i) {
    signals.class_ns[kWholeGraphClass] += trace.graph_execs.end_ns[i] - trace.graph_execs.start_ns[i];
  }
  for (const auto& w : windows) signals.annotated_phases |= w.phase != Phase::kUnknown;
  result.workload = recognize_workload(trace, signals);
  const bool llm = result.workload.kind == WorkloadKind::kLlmInference;
  // Phases the names did not give, from the most direct evidence the step holds (step_phases.hpp).
  if (llm) {
    // Forward passes of requests compare their kernel names (rule 5 of step_phases.hpp).
    if (std::any_of(phase_facts.begin(), phase_facts.end(), [](auto& f) { return f.request >= 0; })) {
      collect_kernel_names(k, result.kernel_step, phase_facts, chunking);
    }
    // A step's first one-block-per-token KV-cache write gives its new tokens (rule 4).
    if (k.token_grid.size() == k.size()) {
      std::vector<TimeNs> first_write(phase_facts.size(), std::numeric_limits<TimeNs>::max());
      for (RowIndex i = 0; i < k.size(); ++i) {
        const auto w = result.kernel_step[i];
        if (w < 0 || k.token_grid[i] <= 0 || k.start_ns[i] >= first_write[static_cast<std::size_t>(w)]) continue;
        first_write[static_cast<std::size_t>(w)] = k.start_ns[i];
        phase_facts[static_cast<std::size_t>(w)].cache_write_tokens = k.token_grid[i];
      }
    }
    const auto decided = report::decide_step_phases(trace, steps, phase_facts);
    if (!decided.summary.empty()) result.method += "; " + decided.summary;
    if (found->source == report::StepSource::kForwardPasses) result.method += name_warm_up_request(steps);
  } else {
    for (auto& s : steps) s.phase = Phase::kUnknown;
  }
  result.method += name_cold_leading_steps(steps);
  // Attention kernels whose name does not say the phase take their step's.
  for (auto& s : steps) {
    auto it = s.class_ns.find("attention");
    if (it == s.class_ns.end() || s.phase == Phase::kUnknown || s.phase == Phase::kMixed) continue;
    s.class_ns[s.phase == Phase::kPrefill ? "attention_prefill" : "attention_decode"] += it->second;
    s.class_ns.erase("attention");
  }
  std::map<std::pair<std::string, Phase>, std::vector<const Step*>> by_group;
  for (const auto& s : steps) by_group[{s.group, s.phase}].push_back(&s);
  for (auto& [key, members] : by_group) {
    std::stable_sort(members.begin(), members.end(), [](const Step* x, const Step* y) { return x->start_ns < y->start_ns; });
    StepGroup g;
    g.name = key.first;
    g.phase = key.second;
    g.first_start_ns = members.front()->start_ns;
    std::vector<std::int64_t> wall, kernel, idle, launches, span, period;
    TimeNs previous_gpu_end = 0;
    int previous_window = -1;
    for (const Step* m : members) {
      g.first_start_ns = std::min(g.first_start_ns, m->start_ns);
      wall.push_back(m->wall_ns);
      kernel.push_back(m->kernel_ns);
      idle.push_back(m->wall_ns ? m->gpu_idle_ns * 1000 / m->wall_ns : 0);
      launches.push_back(m->launches);
      if (m->gpu_end_ns == 0) continue;
      span.push_back(m->gpu_span_ns);
      const int window = capture_window_of(trace, m->start_ns);
      if (previous_gpu_end != 0 && window == previous_window) period.push_back(m->gpu_end_ns - previous_gpu_end);
      previous_gpu_end = m->gpu_end_ns;
      previous_window = window;
    }
    g.wall = distribution(wall);
    g.kernel_ns = distribution(kernel);
    g.idle_share_permille = distribution(idle);
    g.launches = distribution(launches);
    g.gpu_span = distribution(span);
    g.gpu_period = distribution(period);
    result.groups.push_back(std::move(g));
  }
  std::sort(result.groups.begin(), result.groups.end(),
            [](const StepGroup& a, const StepGroup& b) { return a.first_start_ns < b.first_start_ns; });
  for (const auto& g : result.groups) {
    if (g.phase == Phase::kDecode) {
      result.decode_wall = g.wall;
      result.decode_kernel_ns = g.kernel_ns;
      result.decode_gpu_period = g.gpu_period;
    }
    if (g.phase == Phase::kPrefill) result.prefill_wall = g.wall;
  }
  read_ttft(steps, result);
  if (found->source == report::StepSource::kForwardPasses && !found->request_starts_from_calls && result.ttft.count > 0) {
    result.notes.push_back({"ttft_from_first_cuda_call", NoteSeverity::kInfo,
                            "TTFT counts from each request's first CUDA call: host work before it (generate()'s Python set-up, "
                            "tokenizing) is not in a CUDA trace; a profiler trace with Python stacks (with_stack=True) shows it"});
  }
  result.steps = std::move(steps);
  if (const auto collections = gc_collections(trace); !collections.empty()) {
    for (auto& st : result.steps) std::tie(st.gc_count, st.gc_ns) = gc_within(collections, st.start_ns, st.end_ns);
  }

  read_tpot(trace, result);
  withhold_latency_of_thin_steps(trace, result, chunking);
  if (!llm) {
    result.notes.push_back({"not_llm_inference", NoteSeverity::kInfo,
                            "workload: " + std::string(workload_name(result.workload.kind)) +
                                " (not LLM inference), so steps have no prefill/decode phase, TTFT or TPOT"});
  }
  std::int64_t node_kernels = 0;
  // A coded column whose values are all 0 has no node kernels: no pass over every kernel.
  const auto& node_ids = k.graph_node_id.distinct_values();
  if (node_ids.empty() || std::any_of(node_ids.begin(), node_ids.end(), [](auto id) { return id != 0; })) {
    for (auto id : k.graph_node_id) node_kernels += id != 0;
  }
  if (node_kernels > 0) {
    result.notes.push_back({"graph_nodes_traced", NoteSeverity::kInfo,
                            "CUDA graphs were traced node by node (" + std::to_string(node_kernels) +
                                " kernels): that tracing inflates graph replay times, so step times read high",
                            node_kernels});
  }
  return result;
}

}  // namespace kernscope
