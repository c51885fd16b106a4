// Report's next actions from the steady steps' account, priced by the replay (advice.hpp).
#include "analyses/diagnosis/advice.hpp"
#include "base/stage_clock.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <semaphore>
#include <map>
#include <optional>
#include <tuple>

#include "analyses/diagnosis/diagnosis_whatif.hpp"
#include "analyses/whatif/roof_change.hpp"
#include "model/api_roles.hpp"
#include "base/text_util.hpp"

namespace kernscope {
namespace {


// What each basis of an estimate counts for in the ranking (advice.hpp).
constexpr double kUpperBoundWeight = 0.5;
constexpr double kHeuristicWeight = 0.3;

// A frame of PyTorch's data loading: the DataLoader iterator (Kineto's
// "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), its _next_data, collation.
bool data_loader_frame(std::string_view name) {
  const std::string n = text::lowercase(name);
  return n.find("dataloader") != std::string::npos || n.find("_next_data") != std::string::npos ||
         n.find("collate") != std::string::npos;
}

// The largest entry of a name -> ns map, with its time.
std::pair<std::string, std::int64_t> largest(const std::map<std::string, std::int64_t>& m) {
  std::pair<std::string, std::int64_t> best{"", 0};
  for (const auto& [k, v] : m) {
    if (v > best.second) best = {k, v};
  }
  return best;
}

class Advisor {
 public:
  explicit Advisor(const AdviceInputs& in) : in_(in), steps_(*in.steps), accounting_(*in.accounting) {
    account_ = &(accounting_.steady_is_loop ? accounting_.loop : accounting_.steady);
    threshold_ns_ = account_->window_ns / 100;
    for (std::size_t i = 0; i < steps_.steps.size(); ++i) {
      if (steady(i)) graph_launches_ += steps_.steps[i].graph_launches;
    }
  }

  std::vector<ReportAction> run() {
    if (account_->window_ns <= 0) return {};
    start_replays();
    for (const auto& [part, ns] : account_->parts) {
      if (ns >= threshold_ns_ && part.starts_with("gpu.")) gpu_class(part.substr(4), ns);
    }
    communication();
    copies();
    waits();
    launches();
    framework();
    runtime();
    unrecorded();
    unexplained();
    replay_only();
    for (auto& a : actions_) attach_evidence(a);
    std::stable_sort(actions_.begin(), actions_.end(), [](const ReportAction& a, const ReportAction& b) { return a.rank_ns > b.rank_ns; });
    return std::move(actions_);
  }

 private:
  double share(std::int64_t ns) const { return static_cast<double>(ns) / static_cast<double>(account_->window_ns); }
  // Whether step i is one of the steady steps the account's scope holds (step_accounting.hpp).
  bool steady(std::size_t i) const { return i < accounting_.steady_step.size() && accounting_.steady_step[i]; }
  // The steady steps' windows: each from its start until its range or its GPU work ends.
  std::vector<std::pair<TimeNs, TimeNs>> steady_windows() const {
    std::vector<std::pair<TimeNs, TimeNs>> windows;
    for (std::size_t i = 0; i < steps_.steps.size(); ++i) {
      const Step& s = steps_.steps[i];
      if (steady(i)) windows.push_back({s.start_ns, std::max(s.end_ns, s.gpu_end_ns)});
    }
    return windows;
  }
  std::int64_t part(const std::string& name) const {
    const auto it = account_->parts.find(name);
    return it == account_->parts.end() ? 0 : it->second;
  }
  std::int64_t category(TimeCategory c) const { return account_->at(c); }
  // The largest parts under `prefix`, with their shares ("h2d" 0.814, "d2d" 0.017).
  std::vector<std::pair<std::string, double>> parts_of(const std::string& prefix, std::size_t n) const {
    std::vector<std::pair<std::int64_t, std::string>> parts;
    for (const auto& [k, v] : account_->parts) {
      if (k.starts_with(prefix) && v > 0) parts.push_back({v, k.substr(prefix.size())});
    }
    std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    std::vector<std::pair<std::string, double>> out;
    for (std::size_t i = 0; i < parts.size() && i < n; ++i) out.push_back({parts[i].second, share(parts[i].first)});
    return out;
  }
  std::string largest_part(const std::string& prefix) const {
    std::string best;
    std::int64_t most = -1;
    for (const auto& [k, v] : account_->parts) {
      if (k.starts_with(prefix) && v > most) {
        best = k;
        most = v;
      }
    }
    return best;
  }

  // The replay of `change` over the headline group's steps (started by start_replays where it could
  // be foreseen, else run here).
  const PredictedChange& predicted(const std::string& change) {
    auto it = predictions_.find(change);
    if (it == predictions_.end()) {
      it = predictions_.emplace(change, std::async(std::launch::deferred, [this, change] { return replay(change); }).share()).first;
    }
    return it->second.get();
  }

  PredictedChange replay(const std::string& change) const {
    // roof=CLASS: the class scaled by its roofline's ideal over its time (as kernscope whatif does).
    if (change.starts_with("roof=") && in_.roofline) {
      if (auto roof = roof_change_of(*in_.roofline, change, change.substr(5))) {
        return predict_change(*in_.context, steps_, accounting_, *roof, graphs_);
      }
    }
    return predict_change(*in_.context, steps_, accounting_, change, graphs_);
  }

  // The replays the actions will ask for, started at once on threads of their own: each rebuilds
  // and replays the headline group's steps, and one after the other they were a fifth of report's
  // instructions on an unannotated generate() export, all after every other analysis had finished.
  void start_replays() {
    std::vector<std::string> changes = {"graphs", "no-sync", "overlap-copies", "host=0"};
    if (category(TimeCategory::kCommunication) >= threshold_ns_) changes.push_back("overlap-comm");
    if (in_.roofline && in_.roofline->peaks.peaks) {
      for (const auto& r : in_.roofline->rows) {
        if (r.has_work && part("gpu." + r.name) >= threshold_ns_) changes.push_back("roof=" + r.name);
      }
    }
    // Two at a time: each holds its dependency graph while it replays (about 27 MiB for 64 steps of
    // the eager Llama), and report's peak memory is to stay under the file's size.
    for (const auto& change : changes) {
      predictions_.emplace(change, std::async(std::launch::async, [this, change] {
                                     replaying_.acquire();
                                     PredictedChange p = replay(change);
                                     stage_mark("replay " + change + " done");
                                     replaying_.release();
                                     return p;
                                   }).share());
    }
  }

  // An action on `part`, which holds `time_ns` of the steady steps.
  ReportAction& add(std::string kind, std::string part, std::int64_t time_ns) {
    ReportAction a;
    a.kind = std::move(kind);
    a.part = std::move(part);
    a.time_ns = time_ns;
    a.facts.share = share(time_ns);
    if (!accounting_.steady_is_loop) a.facts.scope = accounting_.steady_groups;
    actions_.push_back(std::move(a));
    return actions_.back();
  }

  // Prices `a` by replaying `change`: its prediction and ranking key (advice.hpp's ladder), or why
  // there is none. False when the replay says the change would not pay here (drop the action).
  // `keep_why`: the action is worth saying even where the replay finds nothing to gain (look closer
  // at what the idle GPU waits for; a wait the change cannot remove): it is then not predicted,
  // for this reason, rather than dropped.
  bool price(ReportAction& a, const std::string& change, const std::string& basis, double weight, const char* keep_why = nullptr) {
    a.change = change;
    const PredictedChange& p = predicted(change);
    if (!p.ran) {
      a.why_not_predicted = "no steps to replay";
      heuristic(a);
      return true;
    }
    if (p.predicted_ns <= 0) {
      // No step takes no time: a replay that leaves none is no prediction (a step without GPU work).
      a.why_not_predicted = "the replay leaves the steps no time (" + text::millis(static_cast<double>(p.predicted_ns)) + "): nothing in them it can price";
      heuristic(a);
      return true;
    }
    if (p.predicted_ns > p.traced_ns) {
      a.why_not_predicted = "the replay predicts the steps slower (" + p.headline + " " + text::millis(static_cast<double>(p.traced_ns)) + " -> " + text::millis(static_cast<double>(p.predicted_ns)) +
                            "), which this change cannot make them: its model does not hold for this trace";
      heuristic(a);
      return true;
    }
    if (p.saving_ns() < threshold_ns_) {
      if (!keep_why) return false;
      a.why_not_predicted = std::string(keep_why) + " (kernscope whatif --change " + change + " saves " + text::millis(static_cast<double>(p.saving_ns())) + ")";
      heuristic(a);
      return true;
    }
    // One TPOT (and TTFT) on the page: the replay's saving is stated on the figure the report
    // heads with (its p50), not on the replay's own median of the steps it replayed.
    std::int64_t from = p.traced_ns, to = p.predicted_ns;
    const Distribution* shown = p.headline == "TPOT" ? &steps_.tpot : p.headline == "TTFT" ? &steps_.ttft : nullptr;
    if (shown && shown->count > 0 && shown->p50 > 0 && static_cast<double>(p.traced_ns - p.predicted_ns) < shown->p50) {
      from = std::llround(shown->p50);
      to = from - (p.traced_ns - p.predicted_ns);
    }
    a.predicted = PredictedStep{p.headline, from, to, basis, p.source()};
    a.rank_ns = static_cast<std::int64_t>(weight * static_cast<double>(p.saving_ns()));
    a.rank_basis = weight == 1.0 ? "replayed saving" : "half the replayed upper bound";
    return true;
  }
  void heuristic(ReportAction& a) {
    a.rank_ns = static_cast<std::int64_t>(kHeuristicWeight * static_cast<double>(std::max<std::int64_t>(a.time_ns, 0)));
    a.rank_basis = "30 % of the part's time (heuristic)";
  }
  // Drops the action just added where its pricing said it would not pay.
  void keep_if(bool keep) {
    if (!keep) actions_.pop_back();
  }

  void gpu_class(const std::string& op_class, std::int64_t ns) {
    const RooflineRow* row = nullptr;
    if (in_.roofline && in_.roofline->peaks.peaks) {
      for (const auto& r : in_.roofline->rows) {
        if (r.has_work && r.name == op_class) row = &r;
      }
    }
    if (row && row->time_ns > 0) {
      const double seconds = static_cast<double>(row->time_ns) / 1e9;
      auto& a = add("roofline", "gpu." + op_class, ns);
      a.facts.roof = std::string(roof_name(row->roof));
      a.facts.roof_fraction = row->percent_of_roof() / 100;
      a.facts.tflop_per_s = row->flops / seconds / 1e12;
      a.facts.gb_per_s = row->bytes / seconds / 1e9;
      a.facts.kernels = row->count;
      a.facts.kernel_ns = row->time_ns;
      a.facts.ideal_ns = row->ideal_ns;
      keep_if(price(a, "roof=" + op_class, "roofline: its kernels at their roof, an upper bound", kUpperBoundWeight));
      return;
    }
    auto& a = add("speed-up-kernels", "gpu." + op_class, ns);
    a.why_not_predicted = "what these kernels could reach is not known: no kernel work for them (recorded shapes or --model give their "
                          "roofline; kernscope whatif --change scale=" + op_class + ":F replays a speed-up you choose)";
    heuristic(a);
  }

  void communication() {
    const std::int64_t ns = category(TimeCategory::kCommunication);
    if (ns < threshold_ns_) return;
    auto& a = add("overlap-comm", "communication.collectives", ns);
    // Exposed communication the replay cannot hide by moving it (it runs on streams of its own
    // already, and what follows waits for its results: a DLRM rank's all-to-alls, 18.9 % of its
    // steps in tests/fixtures/kineto/trace_diff__control) is still where the steps' time goes.
    keep_if(price(a, "overlap-comm", "replayed: an upper bound (collectives fully hidden where compute can)", 1.0,
                  "moving the collectives off the compute streams gains little here: what follows them waits for their results "
                  "(event waits, synchronizations), so hiding them takes starting them earlier (the next step's prefetched) or moving fewer bytes"));
  }

  void copies() {
    const std::int64_t ns = category(TimeCategory::kCopy);
    if (ns < threshold_ns_) return;
    auto& a = add("overlap-copies", largest_part("copy."), ns);
    a.facts.parts = parts_of("copy.", 3);
    a.facts.pageable_share = share(account_->pageable_copy_ns);
    keep_if(price(a, "overlap-copies", "replayed", 1.0));
  }

  void waits() {
    const std::int64_t ns = category(TimeCategory::kBlocked);
    if (ns < threshold_ns_) return;
    const std::string part = largest_part("blocked.");
    auto& a = add("remove-waits", part, ns);
    a.facts.parts = parts_of("blocked.", 3);
    if (auto what = waited_for(part.substr(std::string("blocked.").size())); !what.empty()) a.evidence.push_back(what);
    // A wait the replay cannot remove (what it waits for stays on the stream: a host callback, a
    // copy) is still the steps' bottleneck: said, not dropped.
    keep_if(price(a, "no-sync", "replayed", 1.0,
                  "removing the waits alone gains nothing here: what they wait for (see the evidence) stays in the step"));
  }

  // What the steady steps' waits in `call` waited for: the GPU operation of the waiting process
  // that ended last inside each wait (the work it returned with), or none (it waited for something
  // the GPU did not do: a host callback, another thread, an event recorded late).
  std::string waited_for(const std::string& call) const {
    const Trace& trace = in_.context->trace();
    const auto& api = trace.api_calls;
    const std::vector<std::pair<TimeNs, TimeNs>> windows = steady_windows();
    if (windows.empty()) return {};
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& [a, b] : windows) {
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
    auto mine = [&](std::int64_t global_id) { return accounting_.process == 0 || process_key(global_id) == accounting_.process; };
    // The ends of the process's GPU operations over the steady span, in time order, with their names.
    std::vector<std::pair<TimeNs, StringId>> ends;
    for (RowIndex k = 0; k < trace.kernels.size(); ++k) {
      if (trace.kernels.end_ns[k] > lo && trace.kernels.end_ns[k] <= hi && mine(trace.kernels.global_pid[k])) {
        ends.push_back({trace.kernels.end_ns[k], trace.kernels.shown_name(k)});
      }
    }
    const StringId copy_name = kNoString;  // copies are named by their kind below
    for (RowIndex m = 0; m < trace.memcpys.size(); ++m) {
      if (trace.memcpys.end_ns[m] > lo && trace.memcpys.end_ns[m] <= hi && mine(trace.memcpys.global_pid[m])) {
        ends.push_back({trace.memcpys.end_ns[m], copy_name});
      }
    }
    std::sort(ends.begin(), ends.end());
    std::map<std::string, std::int64_t> returned_with;
    std::int64_t waits = 0, nothing = 0;
    for (RowIndex r = 0; r < api.size(); ++r) {
      if (api.start_ns[r] < lo || api.start_ns[r] >= hi || !mine(api.global_tid[r])) continue;
      if (api_base_name(trace.strings.get(api.name[r])) != call) continue;
      bool inside = false;
      for (const auto& [a, b] : windows) inside |= api.start_ns[r] >= a && api.start_ns[r] < b;
      if (!inside) continue;
      ++waits;
      auto it = std::upper_bound(ends.begin(), ends.end(), std::make_pair(api.end_ns[r], StringId{kNoString}));
      // Returned with that work: it ended inside the wait and shortly before its return (50 us, or a
      // tenth of the wait); work that ended long before the return is not what the wait waited for.
      const TimeNs slack = std::max<TimeNs>(50'000, (api.end_ns[r] - api.start_ns[r]) / 10);
      if (it == ends.begin() || std::prev(it)->first <= api.start_ns[r] || api.end_ns[r] - std::prev(it)->first > slack) {
        ++nothing;
        continue;
      }
      const StringId name = std::prev(it)->second;
      std::string n = name == kNoString ? std::string("a memory copy") : std::string(trace.strings.get(name));
      if (n.size() > 60) n = n.substr(0, 57) + "...";
      ++returned_with[n];
    }
    if (waits == 0) return {};
    std::string out = call + ": " + std::to_string(waits) + " waits in the steady steps";
    if (const auto [name, count] = largest(returned_with); count > 0) {
      out += "; " + std::to_string(count) + " returned when " + name + " ended (the GPU work they waited on)";
    }
    if (nothing > 0) {
      out += "; " + std::to_string(nothing) + " with no GPU work ending as they returned (they waited for something the trace's GPU "
             "work does not show: a host callback on the stream, another thread, an event recorded late)";
    }
    return out;
  }

  void launches() {
    const std::int64_t ns = part("host.launch");
    if (ns < threshold_ns_) return;
    const bool graphed = graph_launches_ > 0;
    auto& a = add(graphed ? "launch-less" : "cuda-graphs", "host.launch", ns);
    a.facts.graph_launches = graph_launches_;
    // Steps found in GPU time (split at idle gaps, no range on the host) give the graphs change no
    // step to capture: the launches are still where the time goes (graph_tiny_kernels: 58.6 %).
    bool host_ranges = false;
    for (std::size_t i = 0; i < steps_.steps.size(); ++i) host_ranges |= steady(i) && steps_.steps[i].global_tid != 0;
    keep_if(price(a, "graphs", "replayed", 1.0,
                  host_ranges ? nullptr
                              : "the steps were found in GPU time, with no range on the host where each begins and ends, so the replay "
                                "has no step to capture as a graph (an NVTX range around each step, or --step-range NAME, lets it price this)"));
  }

  void framework() {
    const std::int64_t ns = part("host.framework");
    if (ns < threshold_ns_) return;
    std::int64_t loader = 0;
    std::string loader_name;
    for (const auto* names : {&account_->framework, &account_->framework_inner}) {
      std::int64_t held = 0;
      std::string name;
      for (const auto& [k, v] : *names) {
        if (!data_loader_frame(k)) continue;
        held += v;
        if (name.empty()) name = k;
      }
      if (held > loader) {
        loader = held;
        loader_name = name;
      }
    }
    const auto [inner, inner_ns] = largest(account_->framework_inner);
    const auto [outer, outer_ns] = largest(account_->framework);
    if (loader * 2 >= ns) {
      auto& a = add("data-loader", "host.framework", ns);
      a.facts.frame = loader_name;
      a.facts.frame_share = share(loader);
      keep_if(price(a, "host=0", "upper bound: the host's own work between calls removed", kUpperBoundWeight));
      return;
    }
    auto& a = add("host-work", "host.framework", ns);
    a.facts.frame = inner;
    a.facts.frame_share = share(inner_ns);
    a.facts.outer_frame = outer;
    a.facts.outer_share = share(outer_ns);
    keep_if(price(a, "host=0", "upper bound: the host's own work between calls removed", kUpperBoundWeight));
  }

  void runtime() {
    const std::int64_t ns = part("host.runtime");
    if (ns < threshold_ns_) return;
    auto& a = add("runtime-calls", "host.runtime", ns);
    a.why_not_predicted = "no what-if change removes runtime calls";
    heuristic(a);
  }

  void unexplained() {
    const std::int64_t ns = part("idle.unexplained");
    if (ns < threshold_ns_) return;
    auto& a = add("find-host-work", "idle.unexplained", ns);
    price_host_work(a);
  }

  void unrecorded() {
    const std::int64_t ns = part("host.unrecorded");
    if (ns < threshold_ns_) return;
    auto& a = add("host-work", "host.unrecorded", ns);
    price_host_work(a);
  }

  // host=0 (the host's own work between calls removed) prices one host action: it removes all of
  // that work at once, so the first action priced by it claims the saving and the others say so.
  void price_host_work(ReportAction& a) {
    for (const auto& other : actions_) {
      if (&other != &a && other.change && *other.change == "host=0") {
        a.why_not_predicted = "its replay (host=0: the host's own work removed) is the " + other.part +
                              " action's, which removes this time with it; not claimed twice";
        heuristic(a);
        return;
      }
    }
    keep_if(price(a, "host=0", "upper bound: the host's own work between calls removed", kUpperBoundWeight,
                  "the replay finds no host work of the steps' own there to remove"));
  }

  // Changes no part proposed but the replay shows shorten the headline group's steps by 10 % or more.
  void replay_only() {
    struct Candidate {
      const char* change;
      const char* kind;
      const char* part_prefix;
      const char* category;
    };
    for (const Candidate& c : {Candidate{"no-sync", "remove-waits", "blocked.", "blocked"}, Candidate{"graphs", "cuda-graphs", "host.launch", "host.launch"},
                               Candidate{"overlap-copies", "overlap-copies", "copy.", "copy"}}) {
      bool proposed = false;
      for (const auto& a : actions_) proposed |= a.change && *a.change == c.change;
      if (proposed) continue;
      const PredictedChange& p = predicted(c.change);
      if (!p.ran || p.traced_ns <= 0 || p.predicted_ns <= 0 || p.saving_ns() < threshold_ns_) continue;
      if (static_cast<double>(p.traced_ns - p.predicted_ns) < 0.10 * static_cast<double>(p.traced_ns)) continue;
      std::string part = largest_part(c.part_prefix);
      if (part.empty()) part = c.category;  // the part holds nothing in the steady steps
      const std::int64_t held = this->part(part);
      auto& a = add(c.kind, part, held);
      a.facts.replay_only = true;
      if (std::string(c.change) == "overlap-copies") std::tie(a.facts.waited_calls, a.facts.waited_call) = copy_calls_that_waited();
      keep_if(price(a, c.change, "replayed", 1.0));
    }
  }

  // Copy calls of the leading process's steady steps that waited for their own pageable copy (they
  // returned after it ended: the wait is the call's behaviour, whatever its name), and the name of
  // the call most of them were.
  std::pair<std::int64_t, std::string> copy_calls_that_waited() const {
    const Trace& trace = in_.context->trace();
    const auto& m = trace.memcpys;
    const std::vector<std::pair<TimeNs, TimeNs>> windows = steady_windows();
    auto in_steady = [&](TimeNs t) {
      for (const auto& [lo, hi] : windows) {
        if (t >= lo && t < hi) return true;
      }
      return false;
    };
    std::int64_t waited = 0;
    std::map<std::string, std::int64_t> names;
    for (RowIndex r = 0; r < m.size(); ++r) {
      if (r >= m.correlation_id.size() || !in_steady(m.start_ns[r])) continue;
      if (!trace.pageable_memcpy(r)) continue;
      const auto call = in_.context->api_lookup().find(m.global_pid[r], m.correlation_id[r]);
      if (!call || trace.api_calls.end_ns[*call] < m.end_ns[r]) continue;
      ++waited;
      ++names[std::string(api_base_name(trace.strings.get(trace.api_calls.name[*call])))];
    }
    return {waited, largest(names).first};
  }

  // The rules' findings on an action's part are its evidence.
  void attach_evidence(ReportAction& a) const {
    if (!in_.findings) return;
    for (const Finding& f : *in_.findings) {
      if (f.skipped || f.count == 0) continue;
      const std::string p = part_of_rule(f.rule);
      if (!p.empty() && (a.part == p || a.part.starts_with(p + "."))) a.evidence.push_back(f.title + ": " + f.evidence);
    }
    if (a.part == "gpu.moe_gemm" && in_.moe && in_.moe->perfect_router.estimated) {
      a.evidence.push_back("perfect-router estimate: " + in_.moe->perfect_router.verdict);
    }
  }

  const AdviceInputs& in_;
  const StepAnalysis& steps_;
  const StepAccounting& accounting_;
  const TimeAccount* account_ = nullptr;
  std::int64_t threshold_ns_ = 0;
  std::int64_t graph_launches_ = 0;
  std::counting_semaphore<2> replaying_{2};
  // The headline group's graph, built by the first replay and copied by the others.
  std::shared_ptr<WhatIfGraphCache> graphs_ = make_whatif_graph_cache();
  std::map<std::string, std::shared_future<PredictedChange>> predictions_;
  std::vector<ReportAction> actions_;
};

}  // namespace

std::string part_of_rule(const std::string& rule) {
  if (rule == "llm_sync_in_loop" || rule == "cuda_api_sync" || rule == "cuda_memset_sync") return "blocked";
  if (rule == "llm_alloc_in_loop") return "host.runtime";
  if (rule == "llm_h2d_in_loop" || rule == "cuda_memcpy_async" || rule == "cuda_memcpy_sync") return "copy";
  if (rule == "gpu_gaps" || rule == "gpu_time_util") return "idle";
  if (rule == "llm_launch_bound" || rule == "llm_tiny_kernels") return "host.launch";
  return "";
}

std::vector<ReportAction> advise(const AdviceInputs& in) {
  if (!in.context || !in.steps || !in.accounting) return {};
  if (in.steps->steps.empty()) {
    // Nothing to account and replay: said as an action of its own, not an empty list.
    const Trace& trace = in.context->trace();
    if (trace.kernels.size() == 0 && trace.memcpys.size() == 0 && trace.memsets.size() == 0 && trace.graph_execs.size() == 0) {
      // No GPU work at all (a trace of the host only, CUDA activity off): what to record instead.
      ReportAction a;
      a.kind = "trace-gpu";
      a.facts.api_calls = static_cast<std::int64_t>(trace.api_calls.size());
      a.why_not_predicted = "no GPU work in the trace: nothing to account or replay";
      a.rank_basis = "none";
      return {a};
    }
    ReportAction a;
    a.kind = "find-steps";
    a.facts.steps_method = in.steps->method;
    a.why_not_predicted = "no steps: nothing to account or replay";
    a.rank_basis = "none";
    return {a};
  }
  return Advisor(in).run();
}

}  // namespace kernscope
