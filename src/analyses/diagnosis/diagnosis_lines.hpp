// The lines of report's diagnosis as data: what each says, in figures and names, so that its
// sentence is written in one place (render/diagnosis_words.hpp) and the analyses write none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "analyses/work/roofline.hpp"

namespace kernscope::diagnosis_line {

// The trace has no GPU work: why (the ops analysis's message).
struct NoGpuWork {
  std::string why;
};
// The most skewed MoE layer, with the perfect-router estimate's verdict (or why there is none).
struct ExpertImbalance {
  std::int64_t layer = 0;
  double imbalance = 0;  // the busiest expert's tokens over the mean
  bool estimated = false;
  std::string verdict, why_not;
  double saving_pct = 0;
};
// Speculative decoding as the engine's markers show it (kernscope spec).
struct Speculation {
  std::string engine;
  std::int64_t verify_steps = 0, accepted = 0, proposed = 0;
  std::optional<double> acceptance, ms_per_emitted, plain_decode_ms, speedup;
  std::int64_t draft_ns = 0, verify_ns = 0;
  bool draft_on_critical_path = false;
};
// Where the steady steps' time goes: the bottleneck category first, then those of 5 % or more.
struct WhereTimeGoes {
  std::vector<std::pair<std::string, double>> categories;  // name, share
  std::vector<std::string> scope;                           // the steady groups; empty: every step is one loop
};
// The GPU idle with work launched to it (another process, or an offset clock).
struct IdleQueued {
  double share = 0;
};
// The GPU idle with nothing recorded to explain it.
struct IdleUnexplained {
  double share = 0;
};
// A rule's finding said as it found it: its rule, title and evidence.
struct RuleFinding {
  std::string rule, title, evidence;
};
// A synchronization finding on a loop whose GPU hardly idles while the host waits.
struct CheapWaits {
  std::string title, evidence;
  std::int64_t blocked_ns = 0;  // the account's blocked time
};
// Async copies from pageable memory that all ran before the first step (the model's loading).
struct SetupCopies {
  std::string evidence;
};
// The decode kernel classes with their shares of decode kernel time (up to three).
struct DecodeClasses {
  std::vector<std::pair<std::string, double>> classes;
};
// Decode steps whose slowest is over twice the median.
struct DecodeTail {
  double p50_ns = 0, p99_ns = 0;
  std::int64_t max_ns = 0;
};
// The roofline's coverage: how much of the kernel time its work is known for, by source.
struct RooflineCoverage {
  std::int64_t kernel_ns = 0;
  std::int64_t covered_ns = 0;
  std::map<std::string, std::int64_t> covered_by_source;
  std::string step_work_source;  // a model config's whole-step work where no kernel's is known
};
// One headline figure of the roofline (decode MBU, GEMV efficiency, prefill MFU).
struct RooflineFigure {
  RooflineHeadline figure;
  double latency_floor_ns = 0;
};
// The model config's speed of light (report --model): its figures by name, as fractions of peak.
struct ModelSpeedOfLight {
  std::string config;  // the config file's name
  std::vector<std::pair<std::string, double>> figures;
};
// Nothing above applied.
struct NothingStandsOut {};

}  // namespace kernscope::diagnosis_line

namespace kernscope {

using DiagnosisLine =
    std::variant<diagnosis_line::NoGpuWork, diagnosis_line::ExpertImbalance, diagnosis_line::Speculation, diagnosis_line::WhereTimeGoes,
                 diagnosis_line::IdleQueued, diagnosis_line::IdleUnexplained, diagnosis_line::RuleFinding, diagnosis_line::CheapWaits,
                 diagnosis_line::SetupCopies, diagnosis_line::DecodeClasses, diagnosis_line::DecodeTail,
                 diagnosis_line::RooflineCoverage, diagnosis_line::RooflineFigure, diagnosis_line::ModelSpeedOfLight,
                 diagnosis_line::NothingStandsOut>;

}  // namespace kernscope
