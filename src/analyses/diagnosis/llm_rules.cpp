// kernscope's LLM-inference rules (see analyze.hpp). Thresholds, chosen to flag what costs time
// per token rather than every imperfection:
//   launch-bound: median GPU idle > 30 % of a decode step, > 100 launches per step, no graphs
//   tiny kernels: median decode-kernel duration < 3 us
//   tail: max / p50 > 5 for a kernel with at least 10 invocations
#include <algorithm>
#include <cmath>
#include <future>
#include <sstream>

#include "analyses/nsys/api_counts.hpp"
#include "analyses/trace_context.hpp"
#include "base/parallel_chunks.hpp"
#include "base/text_util.hpp"
#include "analyses/nsys/analyze.hpp"
#include "model/api_roles.hpp"
#include "analyses/steps/host_profile.hpp"
#include "kernscope/steps.hpp"
#include "analyses/tail.hpp"

namespace kernscope {
namespace {

using text::fixed;

Finding make(const char* rule, const char* title, std::string advice, std::string no_result, std::string action) {
  Finding f;
  f.rule = rule;
  f.title = title;
  f.advice = std::move(advice);
  f.no_result = std::move(no_result);
  f.action = std::move(action);
  f.rows.report = rule;
  f.rows.title = title;
  f.severity = "none";
  return f;
}

// The last group of decode steps (the measured phase when a warm-up came first).
std::vector<const Step*> decode_steps(const StepAnalysis& s) {
  std::string name;
  for (const auto& g : s.groups) {
    if (g.phase == Phase::kDecode) name = g.name;
  }
  std::vector<const Step*> out;
  for (const auto& st : s.steps) {
    if (st.phase == Phase::kDecode && st.group == name) out.push_back(&st);
  }
  return out;
}

void step_columns(Finding& f) {
  f.rows.columns = {{"Start", Unit::kTimestamp}, {"Wall", Unit::kDuration}, {"GPU Idle", Unit::kDuration},
                    {"Launches"}, {"Syncs"}, {"Allocs"}, {"H2D"}, {"D2H"}, {"Step"}};
}

void add_step_row(Finding& f, const Step& s, std::size_t limit) {
  if (f.rows.rows.size() >= limit) return;
  f.rows.rows.push_back({s.start_ns, s.wall_ns, s.gpu_idle_ns, s.launches, s.syncs, s.allocations, s.h2d_copies,
                         s.d2h_copies, s.name});
}

// Where the launching thread's time goes in these steps, by function, when the trace has sampled
// host stacks (kernscope record --sample cpu, nsys --sample=cpu): "; on the host per step: 3.1 ms
// in F, ...". Empty without samples.
std::string host_functions_said(const TraceContext& context, const std::vector<const Step*>& steps, const std::string& method) {
  const Trace& trace = context.trace();
  if (trace.host.samples.size() == 0 || steps.empty()) return "";
  std::vector<Step> list;
  for (const Step* s : steps) list.push_back(*s);
  const HostProfile host = host_profile_of(context, std::move(list), method, {});
  const HostGroup* largest = nullptr;
  for (const HostGroup& g : host.groups) {
    if (!largest || g.steps > largest->steps) largest = &g;
  }
  if (!largest || largest->samples < 20) return "";
  std::string out = "; on the host per step (" + std::to_string(largest->samples) + " samples of thread " +
                    std::to_string(tid_of(host.global_tid)) + "), by own time: ";
  std::size_t named = 0;
  for (const HostFunction& f : largest->functions) {
    if (named == 3 || f.self_ns_per_step <= 0) break;
    out += (named++ ? ", " : "") + fixed(static_cast<double>(f.self_ns_per_step) / 1e6, 2) + " ms in " + f.name;
  }
  return named ? out + " (kernscope host: the whole breakdown)" : "";
}

// The durations of the kernels that start inside the steps (every kernel's without steps), gathered
// over chunks of the kernels on several threads (6 M kernels on the 1 GB export).
std::vector<std::int64_t> durations_inside(const KernelColumns& k, const std::vector<const Step*>& steps) {
  std::vector<std::pair<TimeNs, TimeNs>> windows;
  for (const Step* s : steps) windows.push_back({s->start_ns, s->end_ns});
  std::sort(windows.begin(), windows.end());
  // Emits the duration of each kernel of rows [begin, end) that starts inside a step.
  const auto each_inside = [&](std::size_t begin, std::size_t end, auto&& emit) {
    // Steps of one thread do not overlap: the window a kernel may start in is the last one starting
    // at or before it. Kernels mostly come in start order, so the window found for one kernel is
    // tried first for the next (a binary search only when the start leaves it).
    std::size_t cursor = 0;  // windows[cursor - 1] is the last window starting at or before the last kernel's start
    for (std::size_t i = begin; i < end; ++i) {
      if (!windows.empty()) {
        const TimeNs t = k.start_ns[i];
        const bool same = cursor > 0 && windows[cursor - 1].first <= t && (cursor == windows.size() || t < windows[cursor].first);
        if (!same) {
          cursor = static_cast<std::size_t>(std::upper_bound(windows.begin(), windows.end(), std::make_pair(t, INT64_MAX)) - windows.begin());
        }
        if (cursor == 0 || t >= windows[cursor - 1].second) continue;
      }
      emit(k.end_ns[i] - k.start_ns[i]);
    }
  };
  return gather_in_chunks<std::int64_t>(ChunkPlan(k.size(), std::size_t{1} << 18), each_inside);
}

}  // namespace

std::vector<Finding> run_llm_rules(const Trace& trace, const StepAnalysis& steps, const AnalyzeOptions& options,
                                   const TailResult* kernel_tail) {
  const TraceContext context(trace, OpRuleSet::builtin());
  return run_llm_rules(context, steps, options, kernel_tail);
}

std::vector<Finding> run_llm_rules(const TraceContext& context, const StepAnalysis& steps, const AnalyzeOptions& options,
                                   const TailResult* kernel_tail) {
  const Trace& trace = context.trace();
  std::vector<Finding> out;
  const auto decode = decode_steps(steps);
  // The tiny-kernel rule's pass over every kernel runs beside the launch-bound rule's host profile.
  auto decode_kernel_durations = std::async(std::launch::async, [&] { return durations_inside(trace.kernels, decode); });
  const std::string no_steps = decode.empty() ? " (no decode steps were identified: " + steps.method + ")" : "";

  {  // launch-bound decode
    Finding f = make("llm_launch_bound", "Launch-Bound Decode",
                     "The GPU is idle for most of each decode step while the host issues many small launches: "
                     "host and launch overhead, not GPU work, set the time per token.\n\nSuggestion: capture the decode "
                     "step in a CUDA graph (torch.compile mode=\"reduce-overhead\", vLLM/SGLang CUDA graphs), or fuse kernels.",
                     "Decode steps are not launch-bound" + no_steps + ".",
                     "capture the decode step in a CUDA graph so one launch replaces hundreds");
    step_columns(f);
    std::vector<std::int64_t> idle, launches, api;
    std::int64_t graphs = 0;
    for (const Step* s : decode) {
      idle.push_back(s->wall_ns ? s->gpu_idle_ns * 1000 / s->wall_ns : 0);
      launches.push_back(s->launches);
      api.push_back(s->launch_api_ns);
      graphs += s->graph_launches;
    }
    const auto idle_d = distribution(idle), launch_d = distribution(launches), api_d = distribution(api);
    if (!decode.empty() && idle_d.p50 > 300 && launch_d.p50 > 100 && graphs == 0) {
      for (const Step* s : decode) {
        if (s->wall_ns && s->gpu_idle_ns * 1000 / s->wall_ns > 300) {
          ++f.count;
          add_step_row(f, *s, options.rows);
        }
      }
      f.severity = idle_d.p50 > 600 ? "critical" : "warning";
      f.evidence = "GPU idle " + fixed(idle_d.p50 / 10, 1) + " % of each decode step (median of " + std::to_string(decode.size()) +
                   " steps, step wall p50 " + fixed(steps.decode_wall.p50 / 1e6, 3) + " ms, GPU busy " +
                   fixed((steps.decode_wall.p50 * (1 - idle_d.p50 / 1000)) / 1e6, 3) + " ms); " +
                   std::to_string(static_cast<std::int64_t>(launch_d.p50)) + " launches per step taking " +
                   fixed(api_d.p50 / 1e6, 3) + " ms of launch API; no CUDA graph launches" + host_functions_said(context, decode, steps.method);
    } else {
      f.evidence = decode.empty() ? "no decode steps" : "median GPU idle " + fixed(idle_d.p50 / 10, 1) + " %, " +
                                                              std::to_string(static_cast<std::int64_t>(launch_d.p50)) +
                                                              " launches per decode step, " + std::to_string(graphs) + " graph launches";
    }
    out.push_back(std::move(f));
  }
  {  // synchronisation / D2H in the loop
    Finding f = make("llm_sync_in_loop", "Host Synchronization in the Decode Loop",
                     "These decode steps block the host on the GPU (stream/device synchronize, device-to-host copies), "
                     "which serialises launches with execution.\n\nSuggestion: keep results on the GPU between steps, "
                     "or read them back asynchronously (pinned buffer + event) a step later.",
                     "No synchronization inside decode steps" + no_steps + ".",
                     "remove per-step .item()/.cpu()/synchronize calls; read results back asynchronously");
    step_columns(f);
    std::int64_t sync_ns = 0;
    for (const Step* s : decode) {
      if (s->syncs + s->d2h_copies == 0) continue;
      ++f.count;
      sync_ns += s->sync_ns;
      add_step_row(f, *s, options.rows);
    }
    if (f.count) f.severity = "warning";
    f.evidence = std::to_string(f.count) + " of " + std::to_string(decode.size()) + " decode steps synchronize, " +
                 fixed(static_cast<double>(sync_ns) / 1e6, 3) + " ms blocked in synchronize calls";
    out.push_back(std::move(f));
  }
  {  // allocation churn
    Finding f = make("llm_alloc_in_loop", "Allocation Churn in the Decode Loop",
                     "These decode steps allocate or free device memory; cudaMalloc and cudaFree synchronise and are slow."
                     "\n\nSuggestion: preallocate (KV cache, workspaces) or use a caching allocator / memory pool.",
                     "No allocations inside decode steps" + no_steps + ".",
                     "preallocate buffers or use a caching allocator so steps do not call cudaMalloc/cudaFree");
    step_columns(f);
    for (const Step* s : decode) {
      if (s->allocations == 0) continue;
      ++f.count;
      add_step_row(f, *s, options.rows);
    }
    if (f.count) f.severity = "warning";
    f.evidence = std::to_string(f.count) + " of " + std::to_string(decode.size()) + " decode steps allocate or free memory";
    out.push_back(std::move(f));
  }
  {  // graphs traced whole
    Finding f = make("llm_graphs_hidden", "CUDA Graphs Traced as Whole Graphs",
                     "CUDA graphs were launched but no kernel carries a graph node id: the profiler traced each graph as one "
                     "unit and the kernels inside are hidden.\n\nSuggestion: trace with nsys --cuda-graph-trace=node (or "
                     "kernscope record) to see them.",
                     "Graph launches, if any, were traced node by node.",
                     "re-trace with --cuda-graph-trace=node to see the kernels inside the graphs");
    f.rows.columns = {{"Graph Launches"}, {"Kernels From Graph Nodes"}};
    const std::int64_t launches = report::count_api_calls(trace, ApiRole::kGraphLaunch, &context);  // backtraced calls once
    // A kernel of a graph shows as one where the trace itemized the graph (count_graph_replay_kernels).
    const std::int64_t node_kernels = launches > 0 ? report::count_graph_replay_kernels(trace, context.api_lookup()).total() : 0;
    if (launches > 0 && node_kernels == 0 && !trace.kernels.graph_node_id.empty()) {
      f.count = launches;
      f.severity = "warning";
      f.rows.rows.push_back({launches, node_kernels});
    }
    f.evidence = std::to_string(launches) + " graph launches, " + std::to_string(node_kernels) + " kernels from graph nodes";
    out.push_back(std::move(f));
  }
  {  // tiny kernels
    Finding f = make("llm_tiny_kernels", "Tiny Kernels Dominate Decode",
                     "Most decode kernels run for a few microseconds, less than it takes to launch them: the step is a long "
                     "chain of launches.\n\nSuggestion: fuse elementwise work (torch.compile, fused norm/RoPE/activation "
                     "kernels) and capture the step in a CUDA graph.",
                     "Decode kernels are not dominated by tiny ones.",
                     "fuse the small elementwise kernels (torch.compile or fused kernels) and use CUDA graphs");
    f.rows.columns = {{"Median Kernel", Unit::kDuration}, {"Kernels < 3 us"}, {"Kernels"}};
    std::vector<std::int64_t> durations = decode_kernel_durations.get();
    if (!durations.empty()) {
      const auto tiny = std::count_if(durations.begin(), durations.end(), [](std::int64_t x) { return x < 3000; });
      const bool windows = !decode.empty();
      select_percentile_ranks(durations, {50});
      const double p50 = percentile_linear(durations, 50);
      if (p50 < 3000) {
        f.count = tiny;
        f.severity = "warning";
        f.rows.rows.push_back({static_cast<std::int64_t>(p50), static_cast<std::int64_t>(tiny), static_cast<std::int64_t>(durations.size())});
      }
      f.evidence = "median " + std::string(windows ? "decode " : "") + "kernel " + fixed(p50 / 1000, 2) + " us; " +
                   fixed(100.0 * static_cast<double>(tiny) / static_cast<double>(durations.size()), 1) + " % of " +
                   std::to_string(durations.size()) + " kernels under 3 us";
    }
    out.push_back(std::move(f));
  }
  {  // H2D copies in the loop
    Finding f = make("llm_h2d_in_loop", "Host-to-Device Copies in the Decode Loop",
                     "These decode steps copy data from the host every step (inputs, positions, sampling parameters).\n\n"
                     "Suggestion: keep per-step inputs on the GPU, or stage them in pinned memory with async copies "
                     "overlapped with the previous step.",
                     "No host-to-device copies inside decode steps" + no_steps + ".",
                     "keep per-step inputs on the GPU or prefetch them asynchronously from pinned memory");
    step_columns(f);
    for (const Step* s : decode) {
      if (s->h2d_copies == 0) continue;
      ++f.count;
      add_step_row(f, *s, options.rows);
    }
    if (f.count) f.severity = "info";
    f.evidence = std::to_string(f.count) + " of " + std::to_string(decode.size()) + " decode steps copy host to device";
    out.push_back(std::move(f));
  }
  {  // tail anomalies
    Finding f = make("llm_tail_anomalies", "Kernel Tail Anomalies",
                     "These kernels usually run fast but some invocations take far longer (max / p50 > 5): look for "
                     "contention, clock drops, or data-dependent work (kernscope tail).",
                     "No kernel has invocations far slower than its median.",
                     "inspect the slow invocations' time ranges (kernscope tail, timeline) for contention or clock drops");
    f.rows.columns = {{"Count"}, {"P50", Unit::kDuration}, {"Max", Unit::kDuration}, {"Max/P50"}, {"Tail Score"}, {"Name"}};
    Result<TailResult> computed = kernel_tail ? Result<TailResult>(TailResult{}) : tail_statistics(context, TailSubject::kKernel);
    const TailResult* tail = kernel_tail ? kernel_tail : (computed ? &*computed : nullptr);
    if (tail) {
      for (const auto& r : tail->by_tail_score) {
        if (r.count < 10 || r.max_over_p50 <= 5) continue;
        ++f.count;
        if (f.rows.rows.size() < options.rows) {
          f.rows.rows.push_back({r.count, r.p50_ns, r.max_ns, std::round(r.max_over_p50 * 100) / 100,
                                 static_cast<std::int64_t>(std::llround(r.tail_score)), r.name});
        }
      }
    }
    if (f.count) f.severity = "info";
    f.evidence = std::to_string(f.count) + " kernels with max / p50 > 5";
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace kernscope
