// Steps, their prefill/decode phases and the workload they belong to: the public API of the step
// analysis (kernscope steps, report, LLM rules).
// Steps come from the most trustworthy source the trace offers (analyses/steps/step_windows.hpp:
// --step-range, step-naming annotations, the kernel period, GPU idle gaps). The phase is read from
// the annotation, else from the step's evidence (analyses/steps/step_phases.hpp: attention shapes,
// attention kernel kinds, the GEMM/GEMV mix); `method` says which decided.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/phase.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// What kind of work a trace holds, decided from evidence in the trace and saying which: only LLM
// inference gets prefill/decode phases, TTFT/TPOT and the LLM rules and advice.
enum class WorkloadKind { kLlmInference, kTraining, kInference, kBenchmark, kUnknown };

// "llm_inference", "training", "inference", "benchmark", "unknown" (report JSON's workload.kind).
std::string_view workload_name(WorkloadKind kind);

struct Workload {
  WorkloadKind kind = WorkloadKind::kUnknown;
  std::vector<std::string> evidence;  // sentences with the numbers behind the decision
};

// What the decision reads besides the trace's names: GPU kernel time by operation class, and
// whether step annotations named prefill or decode phases.
struct WorkloadSignals {
  std::map<std::string, std::int64_t> class_ns;
  bool annotated_phases = false;
};

Workload recognize_workload(const Trace& trace, const WorkloadSignals& signals);


struct Step {
  std::string name;
  std::string group;  // the group it counts in (step_group_name of its name)
  Phase phase = Phase::kUnknown;
  TimeNs start_ns = 0, end_ns = 0;
  // Whose step it is: the host thread of its range (0: a step found in GPU time) and its process
  // (process_key packing; 0: any process, for GPU-time steps of a trace not split by process).
  std::int64_t global_tid = 0, global_pid = 0;
  // New tokens the step's forward pass processed (prompt tokens of a prefill, one per sequence of a
  // decode), where the trace shows them (step_phases.hpp: an engine's annotation, the embedding's
  // recorded input shape); -1: not shown.
  std::int64_t tokens = -1;
  std::int64_t wall_ns = 0;
  std::int64_t gpu_busy_ns = 0;   // union of GPU operations of the process inside the step window
  std::int64_t gpu_idle_ns = 0;   // wall - busy
  std::int64_t kernels = 0;       // kernels launched in the step
  std::int64_t kernel_ns = 0;     // their summed durations
  std::int64_t launches = 0;      // launch API calls in the step
  std::int64_t launch_api_ns = 0;
  std::int64_t syncs = 0;         // stream/device/event synchronisations in the step
  std::int64_t sync_ns = 0;
  std::int64_t allocations = 0;   // cudaMalloc/cudaFree/cuMemAlloc... in the step
  std::int64_t h2d_copies = 0, d2h_copies = 0;
  std::int64_t graph_launches = 0;
  std::int64_t gc_count = 0, gc_ns = 0;  // Python garbage collections inside the step (host_profile.hpp)
  // The step projected onto the GPU, as nsys's NVTX GPU projection: from the first start to the
  // last end of the GPU operations launched in the step (kernels, whole-graph executions, copies,
  // sets). 0 when it launched none. For an asynchronous loop (CUDA graphs, no sync per step) this,
  // not the wall, is how long the step took.
  TimeNs gpu_start_ns = 0, gpu_end_ns = 0;
  std::int64_t gpu_span_ns = 0;
  // When the step's sampled token reached the host (a forward pass's device-to-host copy after its
  // sampling kernel); 0: not seen. TTFT ends there where it is seen.
  TimeNs token_ns = 0;
  std::map<std::string, std::int64_t> class_ns;  // kernel time by operation class
};

struct Distribution {
  std::int64_t count = 0;
  double p50 = 0, p95 = 0, p99 = 0, mean = 0;
  std::int64_t max = 0;
};
Distribution distribution(std::vector<std::int64_t> values);

// The group a step of this name counts in: its name, except that a trailing "#<number>" reads
// "#N", so numbered steps are one group (torch.profiler's ProfilerStep#4, ProfilerStep#5, ... are
// "ProfilerStep#N"; the number counts calls of step(), not a kind of step).
std::string step_group_name(std::string_view name);

struct StepOptions {
  std::optional<std::string> step_range;  // NAME[@DOMAIN]: exact range name
};

// Steps of one name and phase (e.g. "warmup:decode_step" apart from "measure:decode_step").
struct StepGroup {
  std::string name;
  Phase phase = Phase::kUnknown;
  TimeNs first_start_ns = 0;
  Distribution wall, kernel_ns, idle_share_permille, launches;
  Distribution gpu_span;    // the members' GPU projections
  Distribution gpu_period;  // end of one member's GPU work to the end of the next's: the time per
                            // step the GPU delivers, whether or not the host waited for it
};

struct StepAnalysis {
  std::string method;  // how steps and phases were found
  std::vector<Step> steps;
  std::vector<StepGroup> groups;  // by first start
  // Headline figures from the last group of each phase (earlier groups such as warm-up are in
  // `groups`): TPOT as seen in the trace, TTFT (the prefill forward), kernel time per decode step.
  Distribution decode_wall;
  Distribution prefill_wall;
  Distribution decode_kernel_ns;
  Distribution decode_gpu_period;  // TPOT on the GPU side; what to read when decode_wall is launch time
  std::vector<Note> notes;  // e.g. profiler inflation (kernscope/notes.hpp: kind, severity, text)
  // What the user feels, from the last group of each phase: time per output token (the GPU period
  // when the steps are asynchronous, else the step wall) and time to first token (wall time from
  // the prefill step's start (a request's set-up included) until its first token reaches the host where the
  // trace shows it, else until its host range or its GPU work ends, whichever is later: waits
  // inside the step count, as the request waits them). Empty unless LLM inference.
  Distribution tpot, ttft;
  // How TPOT was read: "step wall" (each range covers its GPU work), "step start to GPU end" (some
  // steps' GPU work outlives their range), or "GPU period" (the steps overlap).
  std::string tpot_from;
  std::vector<std::int64_t> tpot_samples, ttft_samples;  // the values behind tpot and ttft, in step order
  Workload workload;      // phases, TTFT and TPOT only for llm_inference
  // The step each GPU operation belongs to (an index into `steps`, -1 for none), row by row of
  // trace.kernels / memcpys / memsets: what Python's frames carry so users can pivot by step.
  std::vector<std::int32_t> kernel_step, memcpy_step, memset_step;
};

Result<StepAnalysis> analyze_steps(const Trace& trace, const OpRuleSet& rules, const StepOptions& options);

}  // namespace kernscope
