// Where each step's time goes (step_accounting.hpp): a sweep over the edges of everything the
// step's process did inside the step's window, GPU operations and host calls and ranges alike;
// between two edges the state is constant, and that stretch of time goes to one category.
#include "analyses/steps/step_accounting.hpp"

#include "analyses/trace_context.hpp"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analyses/nsys/rows_in_start_order.hpp"
#include "base/parallel_chunks.hpp"
#include "model/api_roles.hpp"

namespace kernscope {
namespace {

// What a host call does while the GPU is idle (api_roles.hpp: host_call_kind).
using HostCall = HostCallKind;
HostCall host_call_of(std::string_view name) { return host_call_kind(name); }

// Copies by direction (nsys's copy kinds: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP), and sets.
enum CopyPart : std::uint8_t { kH2d, kD2h, kD2d, kP2p, kOtherCopy, kMemsetPart, kCopyParts };
constexpr const char* kCopyPartNames[kCopyParts] = {"h2d", "d2h", "d2d", "p2p", "other", "memset"};
CopyPart copy_part(std::int32_t copy_kind) {
  switch (copy_kind) {
    case 1: return kH2d;
    case 2: return kD2h;
    case 8: return kD2d;
    case 10: return kP2p;
    default: return kOtherCopy;
  }
}

enum HostPart : std::uint8_t { kLaunchPart, kRuntimePart, kFrameworkPart, kUnrecordedPart, kHostParts };
constexpr const char* kHostPartNames[kHostParts] = {"launch", "runtime", "framework", "unrecorded"};

enum class EdgeKind : std::uint8_t { kCompute, kComm, kCopy, kPageable, kBlocking, kLaunch, kRuntime, kFramework, kBusy };
struct Edge {
  TimeNs t;
  std::uint32_t key;  // class id, copy part, call name, framework range number
  EdgeKind kind;
  std::int8_t delta;
};

// Adds `ns` under `key` in a short list (a step touches few classes, calls and ranges).
template <class Key>
void add_to(std::vector<std::pair<Key, std::int64_t>>& list, Key key, std::int64_t ns) {
  for (auto& [k, total] : list) {
    if (k == key) {
      total += ns;
      return;
    }
  }
  list.emplace_back(key, ns);
}

// Counts of what is running, by key.
template <class Key>
void count(std::vector<std::pair<Key, std::int64_t>>& list, Key key, int delta) {
  add_to(list, key, delta);
}

// One step's time by category and part, with keys as numbers until the end.
struct Tally {
  std::array<std::int64_t, kTimeCategories> ns{};
  // GPU time by class id (whole graphs: the last id), and which ids were given time at all (a
  // part of 0 ns is still a part): an array, as a step may run every class and this is added to
  // at every edge of its kernels.
  std::vector<std::int64_t> gpu_class;
  std::vector<std::uint8_t> gpu_class_seen;
  std::vector<std::pair<std::uint32_t, std::int64_t>> blocked_call, framework_range, framework_inner;
  std::array<std::int64_t, kCopyParts> copy{};
  std::array<std::int64_t, kHostParts> host{};
  std::int64_t pageable = 0;
  std::int64_t queued = 0;  // idle while launched work waited to start
};

// Splits `length` among running things in proportion to their counts (the remainder to the first).
template <class Key, class Add>
void split(const std::vector<std::pair<Key, std::int64_t>>& running, std::int64_t total, std::int64_t length, Add&& add) {
  std::int64_t given = 0;
  for (const auto& [key, n] : running) {
    if (n <= 0) continue;
    const std::int64_t part = length * n / total;
    add(key, part);
    given += part;
  }
  for (const auto& [key, n] : running) {
    if (n > 0) {
      add(key, length - given);
      break;
    }
  }
}

}  // namespace

// What the run reads once, shared by every step (step_accounting.hpp).
class AccountSources {
 public:
  explicit AccountSources(const TraceContext& context)
      : context_(context),
        trace_(context.trace()),
        kernels_(trace_.kernels.start_ns, trace_.kernels.end_ns),
        memcpys_(trace_.memcpys.start_ns, trace_.memcpys.end_ns),
        memsets_(trace_.memsets.start_ns, trace_.memsets.end_ns),
        graph_execs_(trace_.graph_execs.start_ns, trace_.graph_execs.end_ns),
        api_(trace_.api_calls.start_ns, trace_.api_calls.end_ns),
        framework_(framework_rows(), framework_end_),
        busy_(busy_rows(), busy_end_) {
    const auto& names = context.class_names();
    for (std::uint32_t c = 0; c < names.size(); ++c) {
      if (names[c] == "communication") communication_class_ = c;
    }
    whole_graph_class_ = static_cast<std::uint32_t>(names.size());
    host_call_.assign(trace_.strings.size() + 1, 0xFF);
    for (const StringId name : trace_.api_calls.name) {
      const std::size_t slot = name == kNoString ? trace_.strings.size() : name;
      if (host_call_[slot] == 0xFF) host_call_[slot] = static_cast<std::uint8_t>(host_call_of(trace_.strings.get(name)));
    }
    const auto& m = trace_.memcpys;
    pageable_.resize(m.size());
    for (RowIndex i = 0; i < m.size(); ++i) {
      pageable_[i] = trace_.pageable_memcpy(i);
    }
    // Waits by behaviour, whatever the call's name: a call that copies to or from pageable memory
    // and returned only once its copy had ended waited for it (the driver stages such a copy through
    // a pinned buffer behind the work queued on its stream: `.item()`, `.cpu()`, an "async" copy).
    if (trace_.api_calls.size() > 0 && !m.correlation_id.empty()) {
      for (RowIndex i = 0; i < m.size(); ++i) {
        if (!pageable_[i] || i >= m.correlation_id.size()) continue;
        const auto call = context.api_lookup().find(m.global_pid[i], m.correlation_id[i]);
        if (!call || trace_.api_calls.end_ns[*call] < m.end_ns[i]) continue;
        if (waited_.empty()) waited_.resize(trace_.api_calls.size());
        waited_[*call] = true;
      }
    }
  }

  // Class ids run from 0 to the whole-graph class.
  std::uint32_t class_ids() const { return whole_graph_class_ + 1; }
  std::string class_name(std::uint32_t id) const {
    return id == whole_graph_class_ ? std::string("cuda graph (not itemized)") : context_.class_names()[id];
  }
  std::string_view string(StringId id) const { return trace_.strings.get(id); }
  const Trace& trace() const { return trace_; }
  std::string_view framework_name(std::uint32_t range) const { return trace_.strings.get(trace_.nvtx.text[framework_row_[range]]); }

  // A host call of a thread, in thread and time order.
  struct CallSpan {
    std::int64_t global_tid;
    TimeNs start_ns, end_ns;
    HostCall call;
    bool operator<(const CallSpan& o) const { return std::tie(global_tid, start_ns, end_ns) < std::tie(o.global_tid, o.start_ns, o.end_ns); }
  };
  // The longest gap between one thread's launches counted as their cost: eager PyTorch spends
  // 5-50 us of framework time per operation; a tenth of a millisecond without a call is other work.
  static constexpr TimeNs kLaunchGap = 100'000;

  // The edges of everything process `pid` (0: any) did inside [lo, hi), clipped to it, sorted by time.
  void edges(std::int64_t pid, TimeNs lo, TimeNs hi, const Step& step, std::vector<Edge>& out,
             std::vector<CallSpan>& launches) const {
    out.clear();
    auto mine_gpu = [&](std::int64_t global_pid) { return pid == 0 || process_key(global_pid) == pid; };
    auto push = [&](TimeNs s, TimeNs e, std::uint32_t key, EdgeKind kind) { push_edges(out, lo, hi, s, e, key, kind); };
    const auto& k = trace_.kernels;
    kernels_.for_each_overlapping(lo, hi, [&](RowIndex r) {
      if (!mine_gpu(k.global_pid[r])) return;
      const std::uint32_t c = context_.kernel_class_id(k.demangled_name[r]);
      push(k.start_ns[r], k.end_ns[r], c, c == communication_class_ ? EdgeKind::kComm : EdgeKind::kCompute);
    });
    const auto& g = trace_.graph_execs;
    graph_execs_.for_each_overlapping(lo, hi, [&](RowIndex r) {
      if (mine_gpu(g.global_pid[r])) push(g.start_ns[r], g.end_ns[r], whole_graph_class_, EdgeKind::kCompute);
    });
    const auto& m = trace_.memcpys;
    memcpys_.for_each_overlapping(lo, hi, [&](RowIndex r) {
      if (!mine_gpu(m.global_pid[r])) return;
      push(m.start_ns[r], m.end_ns[r], copy_part(m.copy_kind[r]), EdgeKind::kCopy);
      if (pageable_[r]) push(m.start_ns[r], m.end_ns[r], 0, EdgeKind::kPageable);
    });
    const auto& ms = trace_.memsets;
    memsets_.for_each_overlapping(lo, hi, [&](RowIndex r) {
      if (mine_gpu(ms.global_pid[r])) push(ms.start_ns[r], ms.end_ns[r], kMemsetPart, EdgeKind::kCopy);
    });
    const auto& a = trace_.api_calls;
    launches.clear();
    api_.for_each_overlapping(lo - kLaunchGap, hi + kLaunchGap, [&](RowIndex r) {
      if (pid != 0 && process_key(a.global_tid[r]) != pid) return;
      const StringId name = a.name[r];
      auto call = static_cast<HostCall>(host_call_[name == kNoString ? trace_.strings.size() : name]);
      if (call != HostCall::kBlocking && !waited_.empty() && waited_[r]) call = HostCall::kBlocking;
      if (call == HostCall::kBlocking) push(a.start_ns[r], a.end_ns[r], name, EdgeKind::kBlocking);
      launches.push_back({a.global_tid[r], a.start_ns[r], a.end_ns[r], call});
    });
    // A run of one thread's CUDA calls that launch or prepare work (not waits), each within a
    // short gap of the last, is host work for launching: the gaps are the framework's own cost of
    // an operation (argument checks, dispatch, the Python around it; a launch is often preceded by
    // cuKernelGetName or cuKernelGetAttribute), what CUDA graphs remove with the calls. A run is
    // host.launch when it launches anything, else host.runtime (an allocation on its own). A
    // longer gap, or a wait, ends the run. One interval per run keeps the sweep's edges few (an
    // eager loop makes hundreds of calls a step).
    if (!std::is_sorted(launches.begin(), launches.end())) std::sort(launches.begin(), launches.end());
    std::size_t i = 0;
    while (i < launches.size()) {
      const CallSpan& first = launches[i];
      if (first.call == HostCall::kBlocking) {
        ++i;
        continue;
      }
      TimeNs run_end = first.end_ns;
      bool launching = first.call == HostCall::kLaunch;
      std::size_t j = i + 1;
      for (; j < launches.size(); ++j) {
        const CallSpan& y = launches[j];
        if (y.global_tid != first.global_tid || y.call == HostCall::kBlocking || y.start_ns - run_end > kLaunchGap) break;
        run_end = std::max(run_end, y.end_ns);
        launching = launching || y.call == HostCall::kLaunch;
      }
      push(first.start_ns, run_end, 0, launching ? EdgeKind::kLaunch : EdgeKind::kRuntime);
      i = j;
    }
    framework_.for_each_overlapping(lo, hi, [&](RowIndex f) {
      if (pid != 0 && process_key(framework_tid_[f]) != pid) return;
      // The step's own range, and ranges around it (a "measure" phase), say nothing about an instant.
      if (framework_start_[f] <= step.start_ns && framework_end_[f] >= step.end_ns) return;
      push(framework_start_[f], framework_end_[f], f, EdgeKind::kFramework);
    });
    // A launching thread busy on a CPU with nothing recorded (the tracer's thread CPU clocks).
    busy_.for_each_overlapping(lo, hi, [&](RowIndex b) {
      if (pid == 0 || process_key(busy_tid_[b]) == pid) push(busy_start_[b], busy_end_[b], 0, EdgeKind::kBusy);
    });
    std::sort(out.begin(), out.end(), earlier);
  }

  // The stretches of [lo, hi) in which launched work of the window waited to start (each kernel's,
  // from its launching call's end to its start), merged into disjoint ones in time order. Read only
  // for steps with idle time: a lookup per kernel.
  void queued_stretches(std::int64_t pid, TimeNs lo, TimeNs hi, std::vector<std::pair<TimeNs, TimeNs>>& out) const {
    out.clear();
    const auto& k = trace_.kernels;
    if (k.correlation_id.empty()) return;
    kernels_.for_each_overlapping(lo, hi, [&](RowIndex r) {
      if (pid != 0 && process_key(k.global_pid[r]) != pid) return;
      if (const auto launch = context_.kernel_launch(r)) {
        const TimeNs from = std::max(trace_.api_calls.end_ns[*launch], lo), to = std::min(k.start_ns[r], hi);
        if (from < to) out.emplace_back(from, to);
      }
    });
    // Kernels come in start order, and their launches mostly in the same order: sorted only where not.
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
    std::size_t kept = 0;
    for (const auto& q : out) {
      if (kept > 0 && q.first <= out[kept - 1].second) {
        out[kept - 1].second = std::max(out[kept - 1].second, q.second);
      } else {
        out[kept++] = q;
      }
    }
    out.resize(kept);
  }

  TimeNs framework_start(std::uint32_t f) const { return framework_start_[f]; }

 private:
  // Host ranges that show framework work: NVTX push/pop and start/end ranges of host threads
  // (user annotations, and PyTorch's cpu_op and record_function ranges in Kineto traces), closed.
  const std::vector<TimeNs>& framework_rows() {
    const auto& n = trace_.nvtx;
    for (RowIndex i = 0; i < n.size(); ++i) {
      if (!is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime || n.end_ns[i] <= n.start_ns[i]) continue;
      if ((n.global_tid[i] & kDeviceTrackBit) != 0 || n.domain_id[i] == kKinetoGpuAnnotationDomain) continue;
      framework_row_.push_back(i);
      framework_start_.push_back(n.start_ns[i]);
      framework_end_.push_back(n.end_ns[i]);
      framework_tid_.push_back(n.global_tid[i]);
    }
    return framework_start_;
  }

  // The stretches in which a CUDA-calling thread was busy on a CPU (KERNSCOPE_THREAD_CPU).
  const std::vector<TimeNs>& busy_rows() {
    const auto& c = trace_.thread_cpu;
    for (RowIndex i = 0; i < c.size(); ++i) {
      if (!c.busy[i]) continue;
      busy_start_.push_back(c.start_ns[i]);
      busy_end_.push_back(c.end_ns[i]);
      busy_tid_.push_back(c.global_tid[i]);
    }
    return busy_start_;
  }

  const TraceContext& context_;
  const Trace& trace_;
  std::vector<TimeNs> busy_start_, busy_end_;
  std::vector<std::int64_t> busy_tid_;
  std::vector<RowIndex> framework_row_;
  std::vector<TimeNs> framework_start_, framework_end_;
  std::vector<std::int64_t> framework_tid_;
  report::RowsInStartOrder kernels_, memcpys_, memsets_, graph_execs_, api_;
  report::RowsInStartOrder framework_;
  report::RowsInStartOrder busy_;
  std::uint32_t communication_class_ = UINT32_MAX;
  std::uint32_t whole_graph_class_ = 0;
  std::vector<std::uint8_t> host_call_;  // HostCall by StringId of API names (the last slot: no name)
  std::vector<bool> pageable_;           // per memcpy row
  std::vector<bool> waited_;             // per API row: waited for its own pageable copy (empty: none did)

  static bool earlier(const Edge& x, const Edge& y) { return x.t < y.t; }
  // The two edges of [s, e) clipped to [lo, hi), if anything is left.
  static void push_edges(std::vector<Edge>& out, TimeNs lo, TimeNs hi, TimeNs s, TimeNs e, std::uint32_t key, EdgeKind kind) {
    s = std::max(s, lo);
    e = std::min(e, hi);
    if (s >= e) return;
    out.push_back({s, key, kind, 1});
    out.push_back({e, key, kind, -1});
  }
};

namespace {

// A stretch in which the sweep found nothing running but, perhaps, the thread busy with nothing
// recorded: the only stretches whose category the queued work can change (add_queued).
struct QuietStretch {
  TimeNs from, to;
  bool unrecorded;  // host.unrecorded, else idle
};

// The sweep: between consecutive edges the running set is constant. `quiet` (when given) gets the
// idle and host.unrecorded stretches, in time order.
Tally sweep(const AccountSources& sources, const std::vector<Edge>& edges, TimeNs lo, TimeNs hi, std::vector<QuietStretch>* quiet) {
  Tally tally;
  tally.gpu_class.assign(sources.class_ids(), 0);
  tally.gpu_class_seen.assign(sources.class_ids(), 0);
  std::vector<std::pair<std::uint32_t, std::int64_t>> compute, blocking;
  std::array<std::int64_t, kCopyParts> copies{};
  std::int64_t computing = 0, communicating = 0, copying = 0, pageable = 0, launching = 0, runtime = 0, busy = 0;
  std::set<std::pair<TimeNs, std::uint32_t>> ranges;  // open framework ranges by start: the first is outermost
  auto account = [&](TimeNs from, TimeNs to) {
    const std::int64_t length = to - from;
    if (length <= 0) return;
    TimeCategory category = TimeCategory::kIdle;
    if (computing > 0) {
      category = TimeCategory::kGpu;
      split(compute, computing, length, [&](std::uint32_t c, std::int64_t ns) {
        tally.gpu_class[c] += ns;
        tally.gpu_class_seen[c] = 1;
      });
    } else if (communicating > 0) {
      category = TimeCategory::kCommunication;
    } else if (copying > 0) {
      category = TimeCategory::kCopy;
      std::int64_t given = 0;
      int first = -1;
      for (int p = 0; p < kCopyParts; ++p) {
        if (copies[p] <= 0) continue;
        if (first < 0) first = p;
        const std::int64_t part = length * copies[p] / copying;
        tally.copy[p] += part;
        given += part;
      }
      tally.copy[first] += length - given;
      if (pageable > 0) tally.pageable += length;
    } else if (std::any_of(blocking.begin(), blocking.end(), [](const auto& b) { return b.second > 0; })) {
      category = TimeCategory::kBlocked;
      for (const auto& [name, n] : blocking) {
        if (n > 0) {
          add_to(tally.blocked_call, name, length);
          break;
        }
      }
    } else if (launching > 0 || runtime > 0 || !ranges.empty()) {
      category = TimeCategory::kHost;
      const HostPart part = launching > 0 ? kLaunchPart : runtime > 0 ? kRuntimePart : kFrameworkPart;
      tally.host[part] += length;
      if (part == kFrameworkPart) {
        add_to(tally.framework_range, ranges.begin()->second, length);
        add_to(tally.framework_inner, ranges.rbegin()->second, length);
      }
    } else if (busy > 0) {
      category = TimeCategory::kHost;
      tally.host[kUnrecordedPart] += length;
      if (quiet) quiet->push_back({from, to, true});
    } else if (quiet) {
      quiet->push_back({from, to, false});
    }
    tally.ns[static_cast<std::size_t>(category)] += length;
  };
  TimeNs at = lo;
  for (std::size_t i = 0; i < edges.size();) {
    const TimeNs t = edges[i].t;
    account(at, t);
    for (; i < edges.size() && edges[i].t == t; ++i) {
      const Edge& e = edges[i];
      switch (e.kind) {
        case EdgeKind::kCompute: count(compute, e.key, e.delta); computing += e.delta; break;
        case EdgeKind::kComm: communicating += e.delta; break;
        case EdgeKind::kCopy: copies[e.key] += e.delta; copying += e.delta; break;
        case EdgeKind::kPageable: pageable += e.delta; break;
        case EdgeKind::kBlocking: count(blocking, e.key, e.delta); break;
        case EdgeKind::kLaunch: launching += e.delta; break;
        case EdgeKind::kRuntime: runtime += e.delta; break;
        case EdgeKind::kBusy: busy += e.delta; break;
        case EdgeKind::kFramework:
          if (e.delta > 0) ranges.insert({sources.framework_start(e.key), e.key});
          else ranges.erase({sources.framework_start(e.key), e.key});
          break;
      }
    }
    at = t;
  }
  account(at, hi);
  return tally;
}

// Where launched work waited to start, a quiet stretch is idle (queued): the GPU had work and had
// not begun it, so even a thread busy with nothing recorded is not what the step waited for (it was
// host.unrecorded in the first sweep). Nothing else changes, so the first sweep's totals are moved
// rather than the window swept again with the waits' edges (which gave the same figures and cost a
// second sweep of almost every step of an eager decode). Both lists are disjoint, in time order.
void add_queued(Tally& tally, const std::vector<QuietStretch>& quiet, const std::vector<std::pair<TimeNs, TimeNs>>& queued) {
  std::size_t first = 0;
  for (const QuietStretch& s : quiet) {
    while (first < queued.size() && queued[first].second <= s.from) ++first;
    for (std::size_t q = first; q < queued.size() && queued[q].first < s.to; ++q) {
      const std::int64_t overlap = std::min(s.to, queued[q].second) - std::max(s.from, queued[q].first);
      if (overlap <= 0) continue;
      tally.queued += overlap;
      if (s.unrecorded) {
        tally.host[kUnrecordedPart] -= overlap;
        tally.ns[static_cast<std::size_t>(TimeCategory::kHost)] -= overlap;
        tally.ns[static_cast<std::size_t>(TimeCategory::kIdle)] += overlap;
      }
    }
  }
}

TimeAccount account_of(const AccountSources& sources, const Tally& tally, std::int64_t window_ns) {
  TimeAccount a;
  a.window_ns = window_ns;
  a.ns = tally.ns;
  for (std::uint32_t c = 0; c < tally.gpu_class.size(); ++c) {
    if (tally.gpu_class_seen[c]) a.parts["gpu." + sources.class_name(c)] += tally.gpu_class[c];
  }
  for (int p = 0; p < kCopyParts; ++p) {
    if (tally.copy[p]) a.parts[std::string("copy.") + kCopyPartNames[p]] += tally.copy[p];
  }
  for (int p = 0; p < kHostParts; ++p) {
    if (tally.host[p]) a.parts[std::string("host.") + kHostPartNames[p]] += tally.host[p];
  }
  for (const auto& [name, ns] : tally.blocked_call) {
    a.parts["blocked." + std::string(api_base_name(sources.string(name)))] += ns;
  }
  if (a.at(TimeCategory::kCommunication)) a.parts["communication.collectives"] = a.at(TimeCategory::kCommunication);
  if (tally.queued) a.parts["idle.queued"] = tally.queued;
  if (a.at(TimeCategory::kIdle) > tally.queued) a.parts["idle.unexplained"] = a.at(TimeCategory::kIdle) - tally.queued;
  for (const auto& [range, ns] : tally.framework_range) a.framework[std::string(sources.framework_name(range))] += ns;
  for (const auto& [range, ns] : tally.framework_inner) a.framework_inner[std::string(sources.framework_name(range))] += ns;
  a.pageable_copy_ns = tally.pageable;
  return a;
}

}  // namespace

std::vector<TimeNs> account_ends(const std::vector<Step>& steps) {
  std::vector<std::size_t> order(steps.size());
  for (std::size_t w = 0; w < order.size(); ++w) order[w] = w;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::tie(steps[x].global_pid, steps[x].start_ns) < std::tie(steps[y].global_pid, steps[y].start_ns);
  });
  std::vector<TimeNs> ends(steps.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Step& s = steps[order[i]];
    TimeNs gpu_end = s.gpu_end_ns;
    // GPU work still running when the process's next step starts is that step's time.
    if (i + 1 < order.size() && steps[order[i + 1]].global_pid == s.global_pid) gpu_end = std::min(gpu_end, steps[order[i + 1]].start_ns);
    ends[order[i]] = std::max(s.end_ns, gpu_end);
  }
  return ends;
}

std::string_view category_name(TimeCategory category) {
  switch (category) {
    case TimeCategory::kGpu: return "gpu";
    case TimeCategory::kCommunication: return "communication";
    case TimeCategory::kCopy: return "copy";
    case TimeCategory::kHost: return "host";
    case TimeCategory::kBlocked: return "blocked";
    case TimeCategory::kIdle: return "idle";
  }
  return "idle";
}

std::int64_t TimeAccount::sum() const {
  std::int64_t total = 0;
  for (auto v : ns) total += v;
  return total;
}

namespace {

// Adds `from` into `into`, both sorted by key: a key that is the one after the last one placed (a
// step's parts are mostly its group's, in the same order) is found with one compare, others searched.
void add_sorted(std::map<std::string, std::int64_t>& into, const std::map<std::string, std::int64_t>& from) {
  auto at = into.begin();
  for (const auto& [k, v] : from) {
    if (at == into.end() || at->first != k) {
      at = into.lower_bound(k);
      if (at == into.end() || at->first != k) at = into.emplace_hint(at, k, 0);
    }
    at->second += v;
    ++at;
  }
}

}  // namespace

void TimeAccount::add(const TimeAccount& other) {
  window_ns += other.window_ns;
  for (std::size_t c = 0; c < kTimeCategories; ++c) ns[c] += other.ns[c];
  add_sorted(parts, other.parts);
  add_sorted(framework, other.framework);
  add_sorted(framework_inner, other.framework_inner);
  pageable_copy_ns += other.pageable_copy_ns;
}

TimeCategory TimeAccount::bottleneck() const {
  std::size_t best = 0;
  for (std::size_t c = 1; c < kTimeCategories; ++c) {
    if (ns[c] > ns[best]) best = c;
  }
  return kAllTimeCategories[best];
}

StepAccounting account_steps(const Trace& trace, const OpRuleSet& rules, const StepAnalysis& steps) {
  const TraceContext context(trace, rules);
  return account_steps(context, steps);
}

std::shared_ptr<const AccountSources> account_sources(const TraceContext& context) { return std::make_shared<const AccountSources>(context); }

StepAccounting account_steps(const TraceContext& context, const StepAnalysis& analysis) {
  if (analysis.steps.empty()) return {};  // nothing to read the sources for
  return account_steps(*account_sources(context), analysis);
}

StepAccounting account_steps(const AccountSources& sources, const StepAnalysis& analysis) {
  StepAccounting result;
  const auto& steps = analysis.steps;
  result.steps.resize(steps.size());
  if (steps.empty()) return result;
  const std::vector<TimeNs> ends = account_ends(steps);
  const Trace& trace = sources.trace();
  const bool trace_has_launch_ids = trace.api_calls.size() > 0 && !trace.kernels.correlation_id.empty();
  // Each step on its own: chunks of steps on several threads.
  ChunkPlan::balanced(steps.size(), 8).run([&](std::size_t, std::size_t begin, std::size_t end) {
    std::vector<Edge> edges;
    std::vector<AccountSources::CallSpan> calls;
    std::vector<QuietStretch> quiet;
    std::vector<std::pair<TimeNs, TimeNs>> queued;
    for (std::size_t w = begin; w < end; ++w) {
      const Step& s = steps[w];
      const TimeNs lo = s.start_ns, hi = ends[w];
      sources.edges(s.global_pid, lo, hi, s, edges, calls);
      quiet.clear();
      Tally tally = sweep(sources, edges, lo, hi, &quiet);
      // Idle time: was launched work waiting to start then? Only the quiet stretches can change
      // (what a second sweep with the waits' edges gave, without sweeping again).
      if (tally.ns[static_cast<std::size_t>(TimeCategory::kIdle)] > 0 && trace_has_launch_ids) {
        sources.queued_stretches(s.global_pid, lo, hi, queued);
        add_queued(tally, quiet, queued);
      }
      result.steps[w] = account_of(sources, tally, hi - lo);
    }
  });
  // Groups (name and phase), in order of first start.
  std::map<std::pair<std::string, Phase>, std::size_t> group_index;
  std::map<std::int64_t, std::int64_t> gpu_by_process;
  for (std::size_t w = 0; w < steps.size(); ++w) {
    gpu_by_process[steps[w].global_pid] += result.steps[w].at(TimeCategory::kGpu);
  }
  result.processes = gpu_by_process.size();
  result.process = gpu_by_process.begin()->first;
  for (const auto& [pid, ns] : gpu_by_process) {
    if (ns > gpu_by_process[result.process]) result.process = pid;
  }
  std::vector<std::size_t> order(steps.size());
  for (std::size_t w = 0; w < order.size(); ++w) order[w] = w;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return steps[x].start_ns < steps[y].start_ns; });
  std::map<Phase, std::size_t> phase_index;
  for (const std::size_t w : order) {
    const Step& s = steps[w];
    auto [g, new_group] = group_index.try_emplace({s.group, s.phase}, result.groups.size());
    if (new_group) result.groups.push_back({s.group, s.phase, 0, {}});
    ++result.groups[g->second].steps;
    result.groups[g->second].account.add(result.steps[w]);
    if (s.global_pid != result.process) continue;
    auto [p, new_phase] = phase_index.try_emplace(s.phase, result.phases.size());
    if (new_phase) result.phases.push_back({std::string(phase_name(s.phase)), s.phase, 0, {}});
    ++result.phases[p->second].steps;
    result.phases[p->second].account.add(result.steps[w]);
    result.loop.add(result.steps[w]);
  }
  // The steady state: per phase, the group that started last (by its first step) of the leading process.
  std::map<Phase, std::string> last_group;
  std::map<Phase, std::size_t> groups_per_phase;
  std::set<std::pair<std::string, Phase>> seen;
  for (const std::size_t w : order) {
    const Step& s = steps[w];
    if (s.global_pid != result.process) continue;
    if (seen.insert({s.group, s.phase}).second) {
      last_group[s.phase] = s.group;
      ++groups_per_phase[s.phase];
    }
  }
  result.steady_is_loop = std::all_of(groups_per_phase.begin(), groups_per_phase.end(), [](const auto& g) { return g.second == 1; });
  result.steady = result.steady_is_loop ? result.loop : TimeAccount{};
  for (const auto& [phase, group] : last_group) result.steady_groups.push_back(group);
  result.steady_step.assign(steps.size(), false);
  for (const std::size_t w : order) {
    const Step& s = steps[w];
    if (s.global_pid != result.process || last_group[s.phase] != s.group) continue;
    result.steady_step[w] = true;
    if (!result.steady_is_loop) result.steady.add(result.steps[w]);
  }
  if (result.processes > 1) {
    result.notes.push_back({"several_processes", NoteSeverity::kInfo,
                            "steps of " + std::to_string(result.processes) + " processes: phases and the loop are process " +
                                std::to_string(pid_of(result.process)) + "'s (the most GPU time); every step is in the step table",
                            static_cast<std::int64_t>(result.processes)});
  }
  return result;
}

}  // namespace kernscope
