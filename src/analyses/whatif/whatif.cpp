// The what-if replay (whatif.hpp): each process's graph replayed in the traced order (every edge
// runs from what happened earlier to what happened later, in the trace and under every change),
// then each step's time and its critical path read from the replayed times.
#include "kernscope/op_classes.hpp"
#include "analyses/whatif/whatif.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <future>
#include <set>
#include <tuple>

#include "analyses/trace_context.hpp"
#include "analyses/whatif/whatif_graph.hpp"
#include "base/sort_runs.hpp"

namespace kernscope {
namespace {

using whatif::Graph;
using whatif::Held;
using whatif::kNoNode;
using whatif::Node;
using whatif::NodeKind;
using whatif::OpKind;
using whatif::Term;

std::size_t node_index(std::int32_t i) { return static_cast<std::size_t>(i); }

TimeCategory category_of_path_part(std::string_view part) {
  const std::string_view head = part.substr(0, part.find('.'));
  for (const TimeCategory c : kAllTimeCategories) {
    if (category_name(c) == head) return c;
  }
  return TimeCategory::kIdle;
}

std::int64_t median_ns(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Replayed times of every node.
struct Replay {
  std::vector<TimeNs> start, end;
  std::vector<Held> held;            // what held each start
  std::vector<std::int32_t> waited;  // blocking calls: the wait term's node that held the end (kNoNode: its own time)
};

Replay replay(const Graph& g) {
  const std::size_t n = g.nodes.size();
  Replay r;
  r.start.assign(n, 0);
  r.end.assign(n, 0);
  r.held.assign(n, Held::kNothing);
  r.waited.assign(n, kNoNode);
  std::vector<std::uint8_t> done(n, 0);  // 1: start known, 2: end known too
  // The traced order: a blocking call's end comes after the operations it waits for ended, every
  // start after what can hold it.
  struct Event {
    TimeNs t;
    std::uint8_t phase;  // 0: a start, 1: a blocking call's end
    std::int32_t node;
  };
  std::vector<Event> events;
  events.reserve(n + n / 8);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& x = g.nodes[i];
    TimeNs key = x.start;
    if (x.kind == NodeKind::kOp && x.launch.node != kNoNode) key = std::max(key, g.nodes[node_index(x.launch.node)].start);
    events.push_back({key, 0, static_cast<std::int32_t>(i)});
  }
  // What a blocking call waits for is replayed before its end, also where the GPU's clock shows
  // that operation starting after the call returned (the clocks' offset: 0.4 us on the MI300 trace).
  for (std::size_t i = 0; i < n; ++i) {
    const Node& x = g.nodes[i];
    if (x.waits_begin == x.waits_end) continue;
    const TimeNs end_key = std::max(x.end, x.start);
    events.push_back({end_key, 1, static_cast<std::int32_t>(i)});
    for (std::uint32_t w = x.waits_begin; w < x.waits_end; ++w) {
      const std::int32_t t = g.waits[w].node;
      if (t != kNoNode && t >= 0) events[node_index(t)].t = std::min(events[node_index(t)].t, end_key);
    }
  }
  // Each thread's calls and each table's operations come in time order: a few runs to merge.
  sort_by_runs(events, [](const Event& a, const Event& b) { return std::tie(a.t, a.phase, a.node) < std::tie(b.t, b.phase, b.node); });
  auto value = [&](const Term& t) -> TimeNs {
    if (t.node == kNoNode) return t.lag;  // the fixed time, INT64_MIN when unset
    const Node& p = g.nodes[node_index(t.node)];
    // Not yet replayed (an order the trace's clocks blur): its traced time.
    const bool known = t.from_end ? done[node_index(t.node)] >= 2 : done[node_index(t.node)] >= 1;
    const TimeNs base = known ? (t.from_end ? r.end[node_index(t.node)] : r.start[node_index(t.node)]) : (t.from_end ? p.end : p.start);
    return base + t.lag;
  };
  auto finish = [&](std::size_t i) {
    const Node& x = g.nodes[i];
    TimeNs e = r.start[i] + x.duration;
    std::int32_t by = kNoNode;
    for (std::uint32_t w = x.waits_begin; w < x.waits_end; ++w) {
      const TimeNs v = value(g.waits[w]);
      if (v > e) {
        e = v;
        by = g.waits[w].node;
      }
    }
    r.end[i] = e;
    r.waited[i] = by;
    done[i] = 2;
  };
  for (const Event& ev : events) {
    const std::size_t i = node_index(ev.node);
    const Node& x = g.nodes[i];
    if (ev.phase == 1) {
      finish(i);
      continue;
    }
    TimeNs s = INT64_MIN;
    Held held = Held::kNothing;
    auto consider = [&](const Term& t, Held h) {
      if (!t.set()) return;
      const TimeNs v = value(t);
      if (v > s) {
        s = v;
        held = t.node == kNoNode ? Held::kNothing : h;
      }
    };
    if (x.kind == NodeKind::kOp) {
      consider(x.launch, Held::kLaunch);
      consider(x.stream, Held::kStream);
      consider(x.cross, Held::kCross);
      consider(x.extra, Held::kExtra);
    } else {
      consider(x.host_order, Held::kHostOrder);
    }
    if (s == INT64_MIN) s = x.start;
    r.start[i] = s;
    r.held[i] = held;
    done[i] = 1;
    if (x.waits_begin == x.waits_end) {
      r.end[i] = s + x.duration;
      done[i] = 2;
    }
  }
  return r;
}

// The part of the step accounting a stretch of the path belongs to.
struct PathWalker {
  // Whose trace each node came from: (first node, its context), by first node (several traces
  // replayed together each name their kernels and calls in their own string table).
  std::vector<std::pair<std::int32_t, const TraceContext*>> contexts;
  const Graph& g;
  const Replay& r;

  const TraceContext& context_of(const Node& n) const {
    const auto i = static_cast<std::int32_t>(&n - g.nodes.data());
    auto it = std::upper_bound(contexts.begin(), contexts.end(), i, [](std::int32_t v, const auto& c) { return v < c.first; });
    return *std::prev(it)->second;
  }

  std::string op_part(const Node& n) const {
    switch (n.op) {
      case OpKind::kCompute: return "gpu." + context_of(n).class_names()[n.class_id];
      case OpKind::kComm: return "communication.collectives";
      case OpKind::kMemset: return "copy.memset";
      case OpKind::kGraph: return "gpu.cuda graph (not itemized)";
      case OpKind::kCopy:
        switch (n.copy_kind) {
          case 1: return "copy.h2d";
          case 2: return "copy.d2h";
          case 8: return "copy.d2d";
          case 10: return "copy.p2p";
          default: return "copy.other";
        }
    }
    return "gpu.other";
  }
  std::string name_of(const Node& n) const {
    if (n.kind == NodeKind::kCall) return std::string(api_base_name(context_of(n).trace().strings.get(n.name)));
    if (n.op == OpKind::kCopy) return op_part(n);
    if (n.op == OpKind::kMemset) return "memset";
    if (n.op == OpKind::kGraph) return "cuda graph";
    return std::string(context_of(n).trace().strings.get(n.name));
  }

  // The path from `from` (a node, at its end) back to `window_start`.
  PathAccount walk(std::int32_t from, TimeNs window_start, TimeNs completion, std::vector<PathLink>* links) const {
    PathAccount p;
    p.ns = completion - window_start;
    std::int64_t given = 0;
    auto add = [&](TimeNs a, TimeNs b, const std::string& part, const Node* n) {
      const TimeNs lo = std::max(a, window_start);
      if (b <= lo) return;
      given += b - lo;
      p.parts[part] += b - lo;
      if (n) {
        auto& [count, ns] = p.operations[name_of(*n)];
        ++count;
        ns += b - lo;
        if (links) links->push_back({name_of(*n), part, n->track, n->kind == NodeKind::kOp, lo, b});
      }
    };
    std::int32_t cur = from;
    bool at_end = true;
    TimeNs t = completion;
    for (std::size_t guard = 0; cur != kNoNode && t > window_start && guard < 4 * g.nodes.size() + 4; ++guard) {
      const Node& n = g.nodes[node_index(cur)];
      const std::size_t i = node_index(cur);
      if (at_end) {
        at_end = false;
        if (n.kind == NodeKind::kOp) {
          const std::int32_t q = r.waited[i];
          if (q != kNoNode) {
            // A collective whose end the last rank's arrival held (ranks replayed together): its
            // transfer after that arrival, then what held that rank's arrival, on the other rank.
            add(r.start[node_index(q)], r.end[i], op_part(n), &n);
            cur = q;
            t = r.start[node_index(q)];
            continue;
          }
          add(r.start[i], r.end[i], op_part(n), &n);
        } else if (n.kind == NodeKind::kCall) {
          const std::int32_t q = r.waited[i];
          const std::string call = std::string(api_base_name(context_of(n).trace().strings.get(n.name)));
          if (q != kNoNode) {
            add(r.end[node_index(q)], r.end[i], "blocked." + call, &n);
            cur = q;
            at_end = true;
            t = r.end[node_index(q)];
            continue;
          }
          const std::string part = n.call == HostCallKind::kBlocking ? "blocked." + call
                                   : n.call == HostCallKind::kLaunch ? "host.launch" : "host.runtime";
          add(r.start[i], r.end[i], part, &n);
        }
        t = r.start[i];
        continue;
      }
      // At its start: what held it.
      const Term* term = nullptr;
      std::string part;
      switch (r.held[i]) {
        case Held::kHostOrder: term = &n.host_order; part = "host.framework"; break;
        case Held::kLaunch: term = &n.launch; part = "host.launch"; break;
        case Held::kStream: term = &n.stream; part = "idle.gap"; break;
        case Held::kCross: term = &n.cross; part = "idle.stream_wait"; break;
        case Held::kExtra: term = &n.extra; part = "idle.gap"; break;
        case Held::kNothing: break;
      }
      if (!term || term->node == kNoNode) break;
      const TimeNs from_time = term->from_end ? r.end[node_index(term->node)] : r.start[node_index(term->node)];
      add(from_time, r.start[i], part, nullptr);
      cur = term->node;
      at_end = term->from_end;
      t = from_time;
    }
    if (p.ns - given != 0) p.parts["idle.unexplained"] += p.ns - given;
    for (const auto& [part, ns] : p.parts) p.category[static_cast<std::size_t>(category_of_path_part(part))] += ns;
    return p;
  }
};

// When a step is done as traced: its range's end or its GPU work's end, whichever is later.
TimeNs completion_of(const Step& s) { return s.gpu_end_ns > 0 ? std::max(s.end_ns, s.gpu_end_ns) : s.end_ns; }

}  // namespace

void PathAccount::add(const PathAccount& other) {
  ns += other.ns;
  for (std::size_t c = 0; c < kTimeCategories; ++c) category[c] += other.category[c];
  for (const auto& [k, v] : other.parts) parts[k] += v;
  for (const auto& [k, v] : other.operations) {
    operations[k].first += v.first;
    operations[k].second += v.second;
  }
}

Result<void> check_change_class(const std::string& text, const std::string& op_class) {
  const auto& known = operation_classes();
  if (std::find(known.begin(), known.end(), op_class) != known.end() || op_class == "copy" || op_class == "cuda graph" ||
      op_class == kWholeGraphClass) {
    return {};
  }
  std::string classes;
  for (const auto& c : known) classes += (classes.empty() ? "" : ", ") + c;
  return make_error(ErrorCode::kInvalidArgument, "--change " + text + ": '" + op_class + "' is not an operation class (one of: " + classes +
                                                     ", " + kWholeGraphClass + ")");
}

const std::string& whatif_change_spellings() {
  static const std::string spellings = "graphs, no-sync[=CALL], scale=CLASS:FACTOR, roof=CLASS, overlap-copies, overlap-comm, host=FACTOR";
  return spellings;
}

Result<WhatIfChange> parse_whatif_change(const std::string& text) {
  WhatIfChange c;
  c.text = text;
  const auto eq = text.find('=');
  const std::string name = text.substr(0, eq);
  const std::string arg = eq == std::string::npos ? std::string() : text.substr(eq + 1);
  auto number = [&](const std::string& s) -> Result<double> {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !(v >= 0) || !std::isfinite(v)) {
      return make_error(ErrorCode::kInvalidArgument, "--change " + text + ": '" + s + "' is not a factor (a number, 0 or more)");
    }
    return v;
  };
  if (name == "graphs" && arg.empty()) {
    c.kind = WhatIfChange::Kind::kGraphs;
  } else if (name == "no-sync") {
    c.kind = WhatIfChange::Kind::kNoSync;
    c.call = std::string(api_base_name(arg));
    if (!c.call.empty() && !has_any(role_of(c.call), ApiRole::kSync)) {
      std::string calls;
      for (const auto n : api_names_with_role(ApiRole::kSync)) calls += (calls.empty() ? "" : ", ") + std::string(n);
      return make_error(ErrorCode::kInvalidArgument, "--change " + text + ": '" + arg + "' is not a synchronization call (one of: " + calls + ")");
    }
  } else if (name == "scale") {
    const auto colon = arg.rfind(':');
    if (colon == std::string::npos || colon == 0) return make_error(ErrorCode::kInvalidArgument, "--change " + text + ": scale takes CLASS:FACTOR (scale=gemm:0.5)");
    c.kind = WhatIfChange::Kind::kScale;
    c.op_class = arg.substr(0, colon);
    if (auto known = check_change_class(text, c.op_class); !known) return std::unexpected(known.error());
    if (c.op_class == "copy") c.op_class = "memcpy";  // the replay's earlier spelling of ops's memcpy
    if (c.op_class == "cuda graph") c.op_class = kWholeGraphClass;  // and of ops's class of graphs traced whole
    auto f = number(arg.substr(colon + 1));
    if (!f) return std::unexpected(f.error());
    c.factor = *f;
  } else if (name == "overlap-copies" && arg.empty()) {
    c.kind = WhatIfChange::Kind::kOverlapCopies;
  } else if (name == "overlap-comm" && arg.empty()) {
    c.kind = WhatIfChange::Kind::kOverlapComm;
  } else if (name == "host" && !arg.empty()) {
    c.kind = WhatIfChange::Kind::kHost;
    auto f = number(arg);
    if (!f) return std::unexpected(f.error());
    c.factor = *f;
  } else {
    return make_error(ErrorCode::kInvalidArgument,
                      "--change " + text + ": not a change (" + whatif_change_spellings() + ")");
  }
  return c;
}

WhatIfResult what_if(const Trace& trace, const OpRuleSet& rules, const StepAnalysis& steps, const StepAccounting& accounting,
                     const WhatIfOptions& options) {
  const TraceContext context(trace, rules);
  return what_if(context, steps, accounting, options);
}

class WhatIfGraphCache {
 public:
  // The graph of `process` over [lo, hi) with `replayed` steps: built by the first caller, a copy for each.
  template <class Build>
  whatif::Graph get(std::int64_t process, TimeNs lo, TimeNs hi, const std::vector<bool>& replayed, Build&& build) {
    std::shared_future<std::shared_ptr<const whatif::Graph>> ready;
    std::promise<std::shared_ptr<const whatif::Graph>> mine;
    bool builder = false;
    {
      std::lock_guard lock(mutex_);
      auto key = std::make_tuple(process, lo, hi, replayed);
      auto it = graphs_.find(key);
      if (it == graphs_.end()) {
        it = graphs_.emplace(std::move(key), mine.get_future().share()).first;
        builder = true;
      }
      ready = it->second;
    }
    if (builder) {
      try {
        mine.set_value(std::make_shared<const whatif::Graph>(build()));
      } catch (...) {
        mine.set_exception(std::current_exception());
      }
    }
    return *ready.get();
  }

 private:
  std::mutex mutex_;
  std::map<std::tuple<std::int64_t, TimeNs, TimeNs, std::vector<bool>>, std::shared_future<std::shared_ptr<const whatif::Graph>>> graphs_;
};

std::shared_ptr<WhatIfGraphCache> make_whatif_graph_cache() { return std::make_shared<WhatIfGraphCache>(); }

namespace {

// One trace of a replay: its analyses, its clock's offset and what is replayed of it.
struct Input {
  const TraceContext* context = nullptr;
  const StepAnalysis* analysis = nullptr;
  const StepAccounting* accounting = nullptr;
  std::int64_t offset_ns = 0;  // subtracted from its times: the clock the traces share
  const std::vector<WhatIfChange>* changes = nullptr;  // its changes (roof= factors are a trace's own)
  std::vector<bool> replayed;
  std::size_t link_step = SIZE_MAX;
  std::size_t processes = 0;   // processes with replayed steps
};

// One process of one trace: its graph, on the shared clock, and where it starts in the joined one.
struct Part {
  std::size_t input = 0;
  std::int64_t process = 0;
  Graph graph;
  std::int32_t first = 0;
};

// Moves a graph's times by `delta` (a trace's clock onto the shared one).
void shift_times(Graph& g, std::int64_t delta) {
  if (delta == 0) return;
  auto fixed = [&](Term& t) {
    if (t.fixed()) t.lag += delta;
  };
  for (Node& n : g.nodes) {
    n.start += delta;
    n.end += delta;
    for (Term* t : {&n.host_order, &n.launch, &n.stream, &n.cross, &n.extra}) fixed(*t);
  }
  for (Term& t : g.waits) fixed(t);
  g.window_start += delta;
  g.window_end += delta;
}

// Builds one trace's graphs (changes and edits applied, moved onto the shared clock) and sets what
// is replayed of it; its calibrations and counts go to `result`.
void build_parts(std::size_t input, Input& in, const WhatIfOptions& options, WhatIfResult& result, std::vector<Part>& parts) {
  const auto& steps = in.analysis->steps;
  in.replayed.assign(steps.size(), options.only_steps.empty());
  for (const std::size_t s : options.only_steps) {
    if (s < steps.size()) in.replayed[s] = true;
  }
  const std::vector<TimeNs> ends = account_ends(steps);
  // Per process: its window, from the first replayed step's start to the last one's completion.
  std::map<std::int64_t, std::pair<TimeNs, TimeNs>> windows;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (!in.replayed[s]) continue;
    auto [it, fresh] = windows.try_emplace(steps[s].global_pid, steps[s].start_ns, std::max(ends[s], steps[s].gpu_end_ns));
    if (!fresh) {
      it->second.first = std::min(it->second.first, steps[s].start_ns);
      it->second.second = std::max({it->second.second, ends[s], steps[s].gpu_end_ns});
    }
  }
  in.processes = windows.size();
  // The step whose path is kept link by link: asked for, or the middle step of the longest group.
  in.link_step = options.links_of_step;
  if (options.keep_links && in.link_step == SIZE_MAX) {
    std::map<std::pair<std::string, Phase>, std::vector<std::size_t>> members;
    for (std::size_t s = 0; s < steps.size(); ++s) {
      if (in.replayed[s] && steps[s].global_pid == in.accounting->process) members[{steps[s].group, steps[s].phase}].push_back(s);
    }
    std::size_t most = 0;
    for (const auto& [key, list] : members) {
      if (list.size() > most) {
        most = list.size();
        in.link_step = list[list.size() / 2];
      }
    }
  }
  for (const auto& [process, window] : windows) {
    auto build = [&] { return whatif::build_graph(*in.context, *in.analysis, process, window.first, window.second + 1, in.replayed); };
    Graph g = options.graphs ? options.graphs->get(process, window.first, window.second + 1, in.replayed, build) : build();
    for (const WhatIfChange& c : *in.changes) whatif::apply_change(*in.context, *in.analysis, c, g);
    whatif::apply_edits(options.edits, g);
    if (process == in.accounting->process || windows.size() == 1) {
      result.launch_latency_ns = g.launch_latency_ns;
      result.queue_gap_ns = g.queue_gap_ns;
      result.graph_launch_ns = g.graph_launch_ns;
      result.graph_node_gap_ns = g.graph_node_gap_ns;
    }
    result.unexplained_ns += g.unexplained_ns;
    for (const Node& n : g.nodes) (n.kind == NodeKind::kOp ? result.operations : result.host_calls) += n.kind == NodeKind::kMark ? 0 : 1;
    for (const auto& note : g.notes) {
      const bool known = std::any_of(result.notes.begin(), result.notes.end(),
                                     [&](const Note& n) { return n.kind == note.kind && n.text == note.text; });
      if (!known) result.notes.push_back(note);
    }
    shift_times(g, -in.offset_ns);
    parts.push_back(Part{input, process, std::move(g), 0});
  }
}

// The steps of one part read from a replay (the joined one: `part.first` is where its nodes start)
// and appended to `result`, in its trace's own clock.
void read_steps(const Input& in, const Part& part, const Replay& r, const PathWalker& walker,
                const WhatIfOptions& options, WhatIfResult& result) {
  const auto& steps = in.analysis->steps;
  const std::int64_t process = part.process;
  const std::int32_t base = part.first;
  const Graph& own = part.graph;  // its step marks and nodes, indexed from `base` in g
  // Each replayed step's start and completion, replayed (the traced ones are the step's own: its
  // range's start, and its range's end or its GPU work's end, whichever is later; the replay
  // without a change gives them back where the graph is complete).
  struct Span {
    TimeNs start = INT64_MAX, completion = INT64_MIN;
    std::int32_t last = kNoNode;  // the node that completes it (in g)
  };
  std::vector<Span> after(steps.size());
  auto extend = [&](std::size_t s, std::int32_t node) {
    Span& sp = after[s];
    sp.start = std::min(sp.start, r.start[node_index(node)]);
    if (r.end[node_index(node)] > sp.completion) {
      sp.completion = r.end[node_index(node)];
      sp.last = node;
    }
  };
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (!in.replayed[s] || steps[s].global_pid != process) continue;
    const std::int32_t a = own.step_start_mark[s], b = own.step_end_mark[s];
    if (a != kNoNode) after[s].start = r.start[node_index(a + base)];
    if (b != kNoNode) extend(s, b + base);
  }
  for (std::size_t i = 0; i < own.nodes.size(); ++i) {
    const Node& n = own.nodes[i];
    if (n.kind != NodeKind::kOp || n.step < 0 || !in.replayed[node_index(n.step)] || steps[node_index(n.step)].global_pid != process) continue;
    const bool has_mark = own.step_start_mark[node_index(n.step)] != kNoNode;
    Span& sp = after[node_index(n.step)];
    const TimeNs keep_start = sp.start;
    extend(node_index(n.step), static_cast<std::int32_t>(i) + base);
    if (has_mark) sp.start = keep_start;  // a range's start is the step's start
  }
  std::vector<std::size_t> order;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (in.replayed[s] && steps[s].global_pid == process && after[s].last != kNoNode) order.push_back(s);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return steps[x].start_ns < steps[y].start_ns; });
  const std::int64_t back = in.offset_ns;  // from the shared clock to the trace's own
  if (!order.empty() && (process == in.accounting->process || in.processes == 1)) {
    TimeNs t0 = INT64_MAX, t1 = INT64_MIN, p0 = INT64_MAX, p1 = INT64_MIN;
    for (const std::size_t s : order) {
      t0 = std::min(t0, steps[s].start_ns);
      t1 = std::max(t1, completion_of(steps[s]));
      p0 = std::min(p0, after[s].start);
      p1 = std::max(p1, after[s].completion);
    }
    result.traced_span_ns = t1 - t0;
    result.predicted_span_ns = p1 - p0;
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t s = order[k];
    ReplayedStep rs;
    rs.step = s;
    rs.traced_start = steps[s].start_ns;
    rs.traced_completion = completion_of(steps[s]);
    rs.start = after[s].start + back;
    rs.completion = after[s].completion + back;
    // From the previous step's completion; the first step of a group from its start, but not
    // before the previous step completed (its work waits for that step's, on a host racing ahead).
    const bool steady = k > 0 && steps[order[k - 1]].group == steps[s].group && steps[order[k - 1]].phase == steps[s].phase;
    const TimeNs traced_before = k > 0 ? completion_of(steps[order[k - 1]]) : INT64_MIN;
    const TimeNs before = k > 0 ? after[order[k - 1]].completion : INT64_MIN;
    const TimeNs traced_from = steady ? traced_before : std::max(rs.traced_start, traced_before);
    const TimeNs from = steady ? before : std::max(after[s].start, before);
    rs.traced_ns = rs.traced_completion - traced_from;
    rs.predicted_ns = after[s].completion - from;
    const bool keep = options.keep_links && s == in.link_step;
    const std::size_t first_link = result.links.size();
    if (options.paths || keep) rs.path = walker.walk(after[s].last, from, after[s].completion, keep ? &result.links : nullptr);
    for (std::size_t l = first_link; l < result.links.size(); ++l) {
      result.links[l].start += back;
      result.links[l].end += back;
    }
    result.steps.push_back(std::move(rs));
  }
}

// A trace's groups, in order of first start, from its replayed steps.
void group_steps(const Input& in, WhatIfResult& result) {
  const auto& steps = in.analysis->steps;
  std::sort(result.steps.begin(), result.steps.end(), [](const ReplayedStep& a, const ReplayedStep& b) { return a.step < b.step; });
  std::map<std::pair<std::string, Phase>, std::size_t> index;
  std::vector<std::vector<std::int64_t>> traced_ns, predicted_ns;
  std::vector<const ReplayedStep*> by_start;
  for (const auto& rs : result.steps) by_start.push_back(&rs);
  std::stable_sort(by_start.begin(), by_start.end(), [&](const ReplayedStep* a, const ReplayedStep* b) {
    return steps[a->step].start_ns < steps[b->step].start_ns;
  });
  for (const ReplayedStep* rs : by_start) {
    const Step& st = steps[rs->step];
    auto [it, fresh] = index.try_emplace({st.group, st.phase}, result.groups.size());
    if (fresh) {
      WhatIfGroup g;
      g.group = st.group;
      g.phase = st.phase;
      for (const auto& ag : in.accounting->groups) {
        if (ag.name == st.group && ag.phase == st.phase) g.accounting_bottleneck = ag.account.bottleneck();
      }
      result.groups.push_back(std::move(g));
      traced_ns.emplace_back();
      predicted_ns.emplace_back();
    }
    WhatIfGroup& g = result.groups[it->second];
    ++g.steps;
    g.path.add(rs->path);
    traced_ns[it->second].push_back(rs->traced_ns);
    predicted_ns[it->second].push_back(rs->predicted_ns);
  }
  for (std::size_t i = 0; i < result.groups.size(); ++i) {
    WhatIfGroup& g = result.groups[i];
    g.traced_step_ns = median_ns(traced_ns[i]);
    g.predicted_step_ns = median_ns(predicted_ns[i]);
    for (const auto v : traced_ns[i]) g.traced_mean_ns += static_cast<double>(v) / static_cast<double>(traced_ns[i].size());
    for (const auto v : predicted_ns[i]) g.predicted_mean_ns += static_cast<double>(v) / static_cast<double>(predicted_ns[i].size());
  }
}

// Every trace's processes replayed; where two or more run collectives, as one graph whose
// collectives wait for each other (processes of one trace share its clock; traces of their own
// clocks are put on one by their offsets).
std::vector<WhatIfResult> replay_inputs(std::vector<Input>& inputs, const WhatIfOptions& options) {
  std::vector<WhatIfResult> results(inputs.size());
  std::vector<Part> parts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    results[i].changes = *inputs[i].changes;
    if (inputs[i].analysis->steps.empty()) {
      results[i].notes.push_back({"no_steps", NoteSeverity::kInfo, "no steps: nothing to replay"});
      inputs[i].replayed.clear();
      continue;
    }
    build_parts(i, inputs[i], options, results[i], parts);
  }
  std::size_t with_collectives = 0;
  for (const Part& part : parts) {
    with_collectives += std::any_of(part.graph.nodes.begin(), part.graph.nodes.end(), [](const Node& n) { return n.op == OpKind::kComm; }) ? 1 : 0;
  }
  Graph joined;
  Replay joint_replay;
  bool joint = false;
  std::int64_t linked = 0;
  std::vector<Note> joint_notes;
  if (with_collectives >= 2) {
    std::vector<const Graph*> graphs;
    for (const Part& part : parts) graphs.push_back(&part.graph);
    std::vector<std::int32_t> first_node;
    joined = whatif::join_graphs(graphs, first_node);
    // A collective's kernels are matched by name: one key per name across the traces' string tables.
    std::map<std::string_view, std::int64_t> key_of_name;
    std::vector<std::int64_t> keys(joined.nodes.size(), -1);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      parts[p].first = first_node[p];
      const Trace& trace = inputs[parts[p].input].context->trace();
      for (std::size_t i = 0; i < parts[p].graph.nodes.size(); ++i) {
        const Node& n = parts[p].graph.nodes[i];
        if (n.kind != NodeKind::kOp || n.op != OpKind::kComm) continue;
        const auto [it, fresh] = key_of_name.try_emplace(trace.strings.get(n.name), static_cast<std::int64_t>(key_of_name.size()));
        keys[node_index(first_node[p]) + i] = it->second;
      }
    }
    const whatif::CollectiveLinks links = whatif::link_collectives(joined, first_node, keys);
    joint = links.linked > 0;
    linked = links.linked;
    if (joint) {
      joint_replay = replay(joined);
      const bool several_traces = inputs.size() > 1;
      joint_notes.push_back({"replayed_together", NoteSeverity::kInfo,
                             std::to_string(parts.size()) + " processes" + (several_traces ? " of " + std::to_string(inputs.size()) + " traces" : "") +
                                 " replayed together: " + std::to_string(links.linked) +
                                 " collective calls wait for every rank that runs them (matched by kernel name and order" +
                                 (several_traces ? "; the traces' clocks aligned by the ranks' offsets)" : ")"),
                             links.linked});
    }
    if (links.not_together > 0 || links.unmatched_names > 0) {
      joint_notes.push_back({"collectives_unlinked", NoteSeverity::kInfo,
                             "collectives left unlinked: " + std::to_string(links.not_together) +
                                 " calls where a rank's kernel ended before another's began, " + std::to_string(links.unmatched_names) +
                                 " kernel names the processes ran a different number of times",
                             links.not_together + links.unmatched_names});
    }
  }
  std::vector<std::pair<std::int32_t, const TraceContext*>> contexts;
  for (const Part& part : parts) contexts.emplace_back(part.first, inputs[part.input].context);
  for (Part& part : parts) {
    Replay own;
    if (!joint) {
      own = replay(part.graph);
      part.first = 0;
    }
    const Graph& g = joint ? joined : part.graph;
    const Replay& r = joint ? joint_replay : own;
    PathWalker walker{joint ? contexts : std::vector<std::pair<std::int32_t, const TraceContext*>>{{0, inputs[part.input].context}}, g, r};
    read_steps(inputs[part.input], part, r, walker, options, results[part.input]);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (joint) results[i].linked_collectives = linked;
    if (!inputs[i].replayed.empty()) {
      results[i].notes.insert(results[i].notes.end(), joint_notes.begin(), joint_notes.end());
      group_steps(inputs[i], results[i]);
    }
  }
  return results;
}

}  // namespace

WhatIfResult what_if(const TraceContext& context, const StepAnalysis& analysis, const StepAccounting& accounting,
                     const WhatIfOptions& options) {
  std::vector<Input> inputs(1);
  inputs[0].context = &context;
  inputs[0].analysis = &analysis;
  inputs[0].accounting = &accounting;
  inputs[0].changes = &options.changes;
  return std::move(replay_inputs(inputs, options).front());
}

std::vector<WhatIfResult> what_if_together(const std::vector<WhatIfTrace>& traces, const WhatIfOptions& given) {
  // Step indices, edit times and the kept path's step are one trace's: every step of every trace is
  // replayed, with the changes alone.
  WhatIfOptions options;
  options.changes = given.changes;
  std::vector<Input> inputs;
  for (const WhatIfTrace& t : traces) {
    Input in;
    in.context = t.context;
    in.analysis = t.steps;
    in.accounting = t.accounting;
    in.offset_ns = t.offset_ns;
    in.changes = t.changes.empty() ? &options.changes : &t.changes;
    inputs.push_back(std::move(in));
  }
  return replay_inputs(inputs, options);
}

}  // namespace kernscope
