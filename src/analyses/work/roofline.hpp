// Speed of light (kernscope roofline): how far each kernel, class or step is from what the GPU
// can do. Work per kernel comes from kernel_work's providers; peaks from gpu_peaks. Per kernel
// instance, the ideal time is max(bytes / peak bandwidth, sum over precisions of FLOPs / peak);
// instances whose ideal time is under the latency floor (default 2 us: the fixed cost of launching,
// ramping up and draining a kernel) are bound by latency/launch and cannot take less than the floor.
// Rows add their instances' ideal times; recoverable = time - ideal.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyses/work/gpu_peaks.hpp"
#include "analyses/work/kernel_work.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/phase.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/table.hpp"

namespace kernscope {

enum class RooflineGrouping { kKernel, kClass, kStep };
Result<RooflineGrouping> parse_roofline_grouping(std::string_view text);

enum class Roof { kMemory, kCompute, kLatency, kUnknown };
std::string_view roof_name(Roof roof);

struct RooflineRow {
  std::string name;
  std::int64_t count = 0;
  std::int64_t time_ns = 0;
  bool has_work = false;  // false: no source accounted for these kernels (numbers empty)
  double flops = 0, bytes = 0;
  double memory_ns = 0, compute_ns = 0;  // the instances' ideal times by either roof
  double ideal_ns = 0;                   // with the latency floor applied per instance
  Roof roof = Roof::kUnknown;
  std::string source;  // the sources of its work, '+'-joined
  double recoverable_ns() const { return has_work && ideal_ns < time_ns ? time_ns - ideal_ns : 0; }
  double percent_of_roof() const { return has_work && time_ns > 0 ? 100.0 * ideal_ns / time_ns : 0; }
};

struct RooflineOptions {
  RooflineGrouping grouping = RooflineGrouping::kKernel;
  std::vector<GpuPeaks> user_peaks;        // --peaks FILE
  double latency_floor_ns = 2000;
  StepOptions steps;
  const OpRuleSet* rules = nullptr;        // for --by class and the GEMV figures
  const StepAnalysis* step_analysis = nullptr;  // steps already found (report), else found here
  std::map<std::string, std::string> provider_options;  // the work providers' options by name
};

// One headline figure of a phase's steady steps (the last group of the phase, as report's TPOT and
// TTFT), in numbers; render words it (roofline_render.hpp).
struct RooflineHeadline {
  enum class Kind : std::uint8_t {
    kDecodeMbu,           // bytes per step over the step time, against the peak bandwidth
    kDecodeGemvAggregate, // a model config's weight matrices over the step's projection kernels' time
    kDecodeGemv,          // the GEMV kernels' bytes over their time (no latency floor), and against their roof
    kPrefillMfu,          // FLOPs per step over the step time, against the dense peak of the precision of most FLOPs
  };
  Kind kind = Kind::kDecodeMbu;
  Phase phase = Phase::kDecode;
  std::string group;
  std::size_t steps = 0;
  double step_ns = 0;        // mean per step of max(wall, GPU span)
  std::string work_source;   // a provider's whole-step work (model config) and its detail; empty: the kernels' own work
  std::string work_detail;
  double covered_share = 0;  // the kernels' own work: the share of the steps' kernel time it is known for
  double per_step = 0;       // bytes (MBU, GEMV) or FLOPs (MFU) per step; the aggregate: weight bytes per step
  double achieved = 0;       // bytes or FLOPs per second
  double peak = 0;           // the same unit
  Precision precision = Precision::kBf16;  // MFU
  double bytes = 0;          // GEMV: the steps' GEMV launches' bytes, all of them
  double kernel_ns = 0;      // GEMV: the GEMV kernels' time in the steps; aggregate: the projection kernels' (all steps)
  double ideal_ns = 0;       // GEMV: their ideal time with the latency floor
  std::int64_t launches = 0, under_floor = 0, launches_in_trace = 0;  // GEMV
  double share() const { return peak > 0 ? achieved / peak : 0; }
};
// A phase whose headline is withheld: its kernels' known work covers under half their time.
struct RooflineWithheld {
  Phase phase = Phase::kDecode;
  std::string group;
  double covered_share = 0;
};

struct RooflineResult {
  std::vector<RooflineRow> rows;  // rows with work by recoverable time, then the others by time
  std::int64_t kernel_ns = 0;     // all kernels' time
  std::int64_t covered_ns = 0;    // kernels whose work a source gave
  std::map<std::string, std::int64_t> covered_by_source;
  std::string step_work_source;   // a provider's whole-step work (model-config), "" when none
  PeakMatch peaks;
  double latency_floor_ns = 0;
  std::vector<RooflineHeadline> headline;  // decode MBU, GEMV bandwidth efficiency, prefill MFU
  std::vector<RooflineWithheld> withheld;  // phases whose headline is not given, and why
  std::vector<Note> notes;                 // what the sources said, what is missing
};

Result<RooflineResult> roofline(const Trace& trace, const RooflineOptions& options);

// Name,Count,Time (ns),FLOPs,Bytes,Intensity (FLOP/B),TFLOP/s,GB/s,Roof,% of Roof,Ideal (ns),Recoverable (ns),Source
Table roofline_table(const RooflineResult& result, std::size_t limit);

}  // namespace kernscope
