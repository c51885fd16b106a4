// Where the host's time goes, step by step: sampled stacks of the thread that launches the GPU
// work, split by function (own time: the innermost frame; total: anywhere on the stack) per group
// of steps, beside the launch and sync time the CUDA trace measures; Python garbage collections
// per step and whether they explain the slow steps.
//
// Garbage collections are NVTX ranges: kernscope's Python hook writes "gc gen<G>" in domain
// "python" (and a mark "gc gen<G>: <C> collected, <U> uncollectable" at its end); TensorRT-LLM
// with TLLM_PROFILE_RECORD_GC=1 writes "Python GC" start/end ranges in the default domain.
//
// The GIL: nsys -t python-gil writes "Holding GIL" and "Waiting for GIL" push/pop ranges in the
// NVTX domain "GIL Trace", per Python thread; the host thread's waits per step, and which threads
// held the lock meanwhile, come from them.
//
// Time from samples: each sample of the host thread stands for some time, and a function's time
// per step is the summed time of the samples that hold it (own: as the innermost frame), over the
// steps. kernscope's sampler takes every thread's stack at each tick, running or blocked (wall
// clock), and the ticks are irregular (the sampler needs the GIL to read the stacks): a sample
// stands for the time since the thread's previous sample. nsys samples threads while they run
// (CPU time): a sample stands for the sampling period (the median gap between a thread's samples).
// A collection holds the GIL, so the sampler's next tick lands in the hook's GC callback: those
// samples are named "[Python garbage collection]" and carry the collection's time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/phase.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct GcCollection {
  TimeNs start_ns = 0, end_ns = 0;
  std::int64_t global_tid = 0;
  std::int32_t generation = -1;       // -1: not recorded (TensorRT-LLM's markers)
  std::int64_t collected = -1;        // -1: not recorded
  std::int64_t uncollectable = -1;
};

// Every collection the trace records (both marker styles), by start time.
std::vector<GcCollection> gc_collections(const Trace& trace);
// How many of `collections` (by start time) overlap [start, end), and for how long inside it.
std::pair<std::int64_t, std::int64_t> gc_within(const std::vector<GcCollection>& collections, TimeNs start, TimeNs end);

struct HostFunction {
  std::string name;                 // "qualname (file.py)", or the native symbol and its module
  std::int64_t self_samples = 0, total_samples = 0;
  std::int64_t self_ns_per_step = 0, total_ns_per_step = 0;
};

struct HostStep {
  std::size_t step = 0;  // index into the StepAnalysis's steps
  std::int64_t samples = 0;
  std::int64_t gc_count = 0, gc_ns = 0;
  std::string top_function;  // the function with the most own samples in the step ("" none)
  std::int64_t gil_wait_ns = 0;  // the host thread waiting for the GIL inside the step
};

struct GilHolder {
  std::int64_t global_tid = 0;
  std::string name;
  std::int64_t ns = 0;  // held the GIL while the host thread waited for it
};

// Steps of one name and phase.
struct HostGroup {
  std::string name;
  Phase phase = Phase::kUnknown;
  std::int64_t steps = 0;
  std::int64_t wall_ns = 0, gpu_idle_ns = 0, launch_api_ns = 0, sync_ns = 0;  // summed over the steps
  std::int64_t samples = 0;
  std::int64_t gc_count = 0, gc_ns = 0;
  std::int64_t gil_wait_ns = 0;
  std::vector<GilHolder> gil_holders;   // by time held during the waits
  std::vector<HostFunction> functions;  // by own time, then total
  // Per sample of the group: its stack and the host time it stands for (for flame graphs).
  std::vector<std::uint32_t> sample_stacks;
  std::vector<std::int64_t> sample_ns;
};

struct HostProfileOptions {
  StepOptions steps;
  std::int64_t thread = 0;  // the host thread (tid or globalTid); 0: the thread that launches most
};

struct HostProfile {
  std::string step_method;            // how steps were found ("" when the whole run is one window)
  std::int64_t global_tid = 0;        // the host thread analysed
  std::string thread_name;
  std::string thread_reason;          // why that thread
  std::vector<Step> steps;
  std::vector<HostStep> host_steps;   // one per step of `steps`
  std::vector<HostGroup> groups;
  std::vector<GcCollection> collections;
  std::vector<std::string> findings;  // in words, most important first
  std::vector<Note> notes;            // what was not measured, sampler cost
  std::int64_t samples_total = 0;     // host thread samples in the trace
  bool gil_traced = false;            // the trace holds nsys's GIL ranges
};

// A trace without host data gives the steps' launch and sync time and a note saying what is missing.
Result<HostProfile> analyze_host(const Trace& trace, const OpRuleSet& rules, const HostProfileOptions& options);
// The same over steps already found (`report`'s launch-bound finding names the functions); no
// steps: the whole run is one window.
HostProfile host_profile_of(const Trace& trace, std::vector<Step> steps, const std::string& step_method,
                            const HostProfileOptions& options);
class TraceContext;
HostProfile host_profile_of(const TraceContext& context, std::vector<Step> steps, const std::string& step_method,
                            const HostProfileOptions& options);  // sharing the run's context

// Tables: per group (phase summary), per function (top `limit` per group; 0 all), per step.
Table host_groups_table(const HostProfile& profile);
Table host_functions_table(const HostProfile& profile, std::size_t limit);
Table host_steps_table(const HostProfile& profile);

}  // namespace kernscope
