// The one-screen diagnosis (kernscope report): what ran, where GPU time goes, how steps
// decompose, what the rules found, and the next actions in plain words with their numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyses/diagnosis/diagnosis_lines.hpp"
#include "analyses/moe/moe.hpp"
#include "analyses/nsys/analyze.hpp"
#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/op_classes.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/steps/tracer_cost.hpp"
#include "kernscope/steps.hpp"
#include "analyses/tail.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct ClassShare {
  std::string op_class;
  std::int64_t ns = 0;
  double share = 0;  // of the phase's kernel time
};

// How close the measured steps come to the GPU's speed of light for the model the user named
// (report --model config.json): decode MBU (bytes per step / step time / peak bandwidth) and
// prefill MFU (FLOPs / time / peak FLOP/s), each with what it divides and where that came from.
struct SpeedOfLight {
  std::string name;       // "decode MBU", "decode MBU over kernel time", "prefill MFU", ...
  double fraction = 0;    // of the peak
  double work = 0;        // bytes or FLOPs of one step
  std::string work_unit;  // "B" or "FLOP"
  double time_ns = 0;     // the step time it is divided by
  double peak_per_s = 0;  // bytes/s or FLOP/s
  std::string work_source, time_source, peak_source;
};

// What the replay predicts an action gives, per step of the headline group (diagnosis_whatif.hpp).
struct PredictedStep {
  std::string metric;                   // "TPOT", "TTFT" or "step time"
  std::int64_t from_ns = 0, to_ns = 0;  // medians over the replayed steps: traced, predicted
  std::string basis;                    // "replayed" (kernscope whatif over the group's steps)
  std::string source;                   // which steps and which change
};

// One of report's next actions as data: what to do, the account part it acts on, the what-if change
// that stands for it and what the replay predicts, with the sentence said beside them. Made and
// ranked by advice.hpp.
// What an action's sentence rests on, as figures and names: render/advice_render.hpp writes the
// sentence from these, the action's kind and its prediction. Shares are of the steady steps' time
// (the account's scope); a field a kind does not use stays empty.
struct ActionFacts {
  double share = 0;                                   // the part's (or category's) share
  std::vector<std::string> scope;                     // the steady step groups; empty: every step is one loop
  std::vector<std::pair<std::string, double>> parts;  // the largest sub-parts with their shares (copies, waits)
  double pageable_share = 0;                          // copies from pageable memory
  // gpu.<class> with a roofline: which roof, how near, and the figures behind it.
  std::string roof;                                   // "memory", "compute", "latency" (roof_name); kind roofline only
  double roof_fraction = 0, tflop_per_s = 0, gb_per_s = 0;
  std::int64_t kernels = 0, kernel_ns = 0;
  double ideal_ns = 0;
  std::int64_t graph_launches = 0;                    // launches: graph launches in the steady steps
  std::string frame, outer_frame;                     // host.framework: the data-loader or innermost frame, the outermost
  double frame_share = 0, outer_share = 0;
  bool replay_only = false;                           // proposed by the replay alone (its part is small)
  std::int64_t waited_calls = 0;                      // copies: calls that returned only when their pageable copy ended
  std::string waited_call;                            // the call most of them were
  std::string steps_method;                           // find-steps: how steps were looked for
  std::int64_t api_calls = -1;                        // trace-gpu: the trace's CUDA calls (-1: not this kind)
};

struct ReportAction {
  std::string kind;                   // speed-up-kernels, roofline, overlap-comm, overlap-copies, remove-waits, cuda-graphs,
                                      // launch-less, data-loader, host-work, runtime-calls, find-host-work, find-steps,
                                      // trace-gpu (no GPU work in the trace)
  std::string part;                   // the account part (kernscope account's names): gpu.<class>, communication.collectives,
                                      // copy.<kind>, blocked.<call>, host.launch|framework|runtime, idle.unexplained
  std::optional<std::string> change;  // kernscope whatif --change spelling, where one stands for it
  std::int64_t time_ns = -1;          // the time the part (or the finding's rows) takes; -1: not measured
  std::optional<PredictedStep> predicted;
  std::string why_not_predicted;      // where predicted is empty
  std::vector<std::string> evidence;  // the rules' findings on its part ("title: evidence"), other figures that back it
  ActionFacts facts;                  // what its sentence says (render/advice_render.hpp writes it)
  std::int64_t rank_ns = -1;          // the ranking key: the saving expected over the steady steps (advice.hpp)
  std::string rank_basis;             // how rank_ns was found: replayed saving, half an upper bound, or a heuristic share
};

struct Diagnosis {
  std::string trace;
  std::optional<std::string> cut_short;  // the trace was cut short and read anyway (--partial): what was dropped
  std::vector<std::string> devices;
  std::int64_t kernels = 0, api_calls = 0;
  std::int64_t gpu_kernel_ns = 0;
  std::vector<std::pair<std::string, double>> top_kernels;  // name, share of kernel time
  OpsResult ops;
  StepAnalysis steps;
  StepAccounting accounting;  // where each step's time goes (step_accounting.hpp)
  std::vector<ClassShare> decode_classes, prefill_classes;
  std::vector<TailRow> kernel_tail, api_tail;  // top tail candidates
  std::vector<TailRow> kernel_tail_by_total;   // every kernel name, total time descending (the HTML page's table)
  std::vector<Finding> findings;               // nsys rules + LLM rules
  std::vector<DiagnosisLine> diagnosis;        // what each line says (render/diagnosis_words.hpp words it)
  std::vector<ReportAction> next_actions;      // most valuable first
  std::vector<SpeedOfLight> speed_of_light;    // with --model: decode MBU, prefill MFU
  std::vector<Note> speed_of_light_notes;  // the model's figures and assumptions, figures left out and why
  TracerCostEstimate tracer_cost;  // kernscope tracer traces: what tracing cost (tracer_cost.hpp)
  // A live capture's trace: which windows it recorded of how long a run (the reader's note), so no
  // total is read as the whole run's. Empty for a trace recorded whole.
  std::string recording;
  // Mixture-of-experts layers (moe.hpp), when the trace has expert GEMM or router kernels.
  std::optional<MoeAnalysis> moe;
};

Result<Diagnosis> diagnose(const Trace& trace, const OpRuleSet& rules, const StepOptions& step_options,
                           const AnalyzeOptions& analyze_options);

}  // namespace kernscope
