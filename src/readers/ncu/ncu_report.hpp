// Nsight Compute CSV exports read into kernels with what a roofline needs: `ncu --csv --page raw`
// (one row per profiled launch, one column per metric, with or without the units row and
// `--print-units base`) and `--page details` (one row per kernel, section and metric, with rule
// results and estimated speedups). ncu's own message lines are kept apart; a CSV of another layout
// or tool is an error (kBadInput) naming what was found.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"

namespace kernscope::readers::ncu {

// FLOPs of one precision from the counters that measure them.
struct FlopTerm {
  std::string precision;             // fp64/fp32/fp16 (FP pipes) or the tensor source type (bf16, fp16, tf32, fp8, int8, ...)
  bool tensor = false;               // tensor-core work
  double flops = 0;
  bool exact = true;                 // false: from a per-cycle or per-second rate ncu rounded
  std::vector<std::string> metrics;  // the counters used, as ncu names them
};

struct StallReason {
  std::string reason;  // ncu's name: long_scoreboard, math_pipe_throttle, ...
  double value = 0;    // in the unit of the family (see NcuKernel::stall_metric)
};

struct RuleResult {
  std::string section, rule, type, description, speedup_type;
  std::optional<double> speedup;  // percent, as ncu estimates it
};

struct NcuMetric {
  double value = 0;   // in the base unit
  std::string unit;   // "byte", "ns", "hz", "byte/second", "%", ...
};

struct NcuKernel {
  std::int64_t id = -1;  // ncu's ID column
  std::int64_t process_id = 0, context = 0, stream = 0, device = 0;
  std::string process_name;
  std::string name;       // as ncu printed it
  std::string demangled;  // ncu's name demangled when it was a mangled one, else ncu's name
  std::string mangled;    // when ncu printed a mangled name (--print-kernel-base mangled)
  std::string join_name;  // the function's own name: what joins ncu's kernels to a trace's
  std::int64_t invocation = 0;  // 0-based: launches of the same name before this one in the file
  std::optional<std::array<std::int32_t, 3>> grid, block;
  std::string compute_capability;

  std::optional<double> duration_ns;
  std::optional<double> dram_read_bytes, dram_write_bytes;  // when the CSV has them apart
  std::optional<double> dram_bytes;  // read + written (or ncu's dram__bytes total)
  bool dram_bytes_exact = true;      // false: from a byte rate ncu rounded, times the duration
  std::string dram_bytes_metric;     // which metrics gave the bytes
  std::optional<double> sm_throughput_pct, memory_throughput_pct, dram_throughput_pct, tensor_pipe_pct;
  std::optional<double> l2_hit_rate_pct, achieved_occupancy_pct, sm_clock_hz;
  std::vector<FlopTerm> flops;            // one per precision that was measured
  std::vector<Note> flop_notes;           // what was counted but could not be turned into FLOPs, and why
  std::vector<StallReason> stalls;        // largest first ("selected" is not a stall and is left out)
  std::string stall_metric;               // the family the stalls come from
  std::vector<RuleResult> rules;          // details page only
  std::map<std::string, NcuMetric> metrics;  // every numeric metric (raw: by name; details: by name where known, else "Section/Label")
  std::map<std::string, std::string> text_values;  // metric cells holding text (device__attribute_display_name, ...)

  std::optional<double> total_flops() const;  // every precision, when any was measured
};

enum class NcuPage { kRaw, kDetails };

struct NcuReport {
  NcuPage page = NcuPage::kRaw;
  std::string source;                 // file name
  std::vector<NcuKernel> kernels;     // in ID order
  std::vector<std::string> messages;  // ncu's ==PROF== / ==WARNING== / ==ERROR== lines
};

Result<NcuReport> read_ncu_csv(const std::string& path);
// The same from text already in memory; `source` names it in messages.
Result<NcuReport> parse_ncu_csv(std::string_view text, const std::string& source);

// Fills the derived fields (duration, bytes, FLOPs, throughputs, stalls) from kernel.metrics.
void derive_kernel_fields(NcuKernel& kernel);

// "(2, 66, 1)" -> {2, 66, 1}.
std::optional<std::array<std::int32_t, 3>> parse_dim3(std::string_view text);

// The function's own name from ncu's spelling of a kernel, which drops some opening brackets
// ("void unnamed>::distribution_kernel<float, ...>(long, T3)" -> "distribution_kernel"):
// the last "::" part of what comes before the first '<' or '(' after the return type.
std::string ncu_function_name(std::string_view name);

}  // namespace kernscope::readers::ncu
