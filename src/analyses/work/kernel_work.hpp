// The work each kernel does — FLOPs by precision and bytes of device memory — and where that
// figure came from, gathered from every source a trace or its side files offer. The roofline
// (src/analyses/roofline*) divides it by time and by the GPU's peaks.
//
// HOW TO PLUG A SOURCE IN (ncu, cuBLAS logs, model config, ...):
//   1. In a file of your own, write
//        Result<void> fill_<source>_work(const WorkRequest& request, WorkTable& table);
//      For every kernel row of request.trace.kernels you can account for, call
//        table.offer(row, KernelWork{...})
//      (false: a more trusted source already gave that kernel's work; yours is not used for it).
//      Analytic per-step figures (a model config) go to table.offer_step(StepWork{...}).
//      Say what you read and what did not match with table.note({kind, severity, "...", count}): it
//      reaches the user (notes.hpp says how kinds and severities are chosen).
//      An unreadable input is an error (Result), which the CLI prints as one line, exit code 2.
//      With none of your options given, return {} at once.
//   2. Add one row to work_providers() in src/analyses/work/kernel_work_providers.cpp, in trust order,
//      with your options: they become `kernscope roofline --NAME VALUE` and Trace.roofline(NAME=...);
//      request.option("NAME") returns the value ("" when not given).
// Trust order (first offer wins, per kernel): ncu (measured counters) > cublas-log (the library's
// own GEMM shapes and types) > kineto-shapes > nvtx-shapes (PyTorch's shapes around the launch) >
// model-config (analytic, per step). Decided in kernel_work_providers.cpp, one place.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/analysis_inputs.hpp"
#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/phase.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// Math precisions with a peak of their own (data/gpu_peaks.tsv has one column each). FP16 and
// BF16 share one tensor-core rate on every GPU of the table. kFp32 is the non-tensor (CUDA core)
// rate, for FP32 math without TF32; kOther: work whose precision no source said (integer index
// math, unknown types): counted in FLOPs, compared with no compute peak.
enum class Precision : std::uint8_t { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8, kFp4, kOther };
inline constexpr std::size_t kPrecisionCount = 9;
std::string_view precision_name(Precision p);  // "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4", "other"

// The names sources go by (the roofline's Source column).
inline constexpr std::string_view kSourceNcu = "ncu";
inline constexpr std::string_view kSourceCublasLog = "cublas-log";
inline constexpr std::string_view kSourceKinetoShapes = "kineto-shapes";
inline constexpr std::string_view kSourceNvtxShapes = "nvtx-shapes";
inline constexpr std::string_view kSourceModelConfig = "model-config";

// How `bytes` was obtained: kMinimum counts every input read and every output written once (from
// shapes or a config: the least any kernel can move); kMeasured is what the memory system moved
// (DRAM counters: re-reads and cache misses included).
enum class BytesKind : std::uint8_t { kMinimum, kMeasured };

struct KernelWork {
  std::array<double, kPrecisionCount> flops{};  // by precision; an FMA counts 2
  double bytes = 0;                             // device-memory bytes read + written
  BytesKind bytes_kind = BytesKind::kMinimum;
  std::string_view source;                      // one of kSource*
  std::string detail;  // what it was computed from, e.g. "aten::mm [8, 4096] x [4096, 14336] bf16"

  double total_flops() const;
  void add_flops(Precision p, double value) { flops[static_cast<std::size_t>(p)] += value; }
};

// Analytic work of a whole step (a model config: every weight read once per decode step, ...).
struct StepWork {
  Phase phase = Phase::kUnknown;
  std::int64_t index = -1;  // the n-th step of that phase (0-based); -1: every step of the phase
  std::array<double, kPrecisionCount> flops{};
  double bytes = 0;
  double matmul_weight_bytes = 0;  // of `bytes`, the weight matrices the step's matmul kernels read (0: unknown)
  std::string_view source;
  std::string detail;
  double total_flops() const;
};

// The operation classes (data/op_rules.tsv) whose kernels are the matmuls that read a model's
// weights: a decode step's projection kernels.
inline constexpr std::array<std::string_view, 4> kProjectionClasses = {"gemv", "gemm", "quantized_gemm", "moe_gemm"};

// What providers fill: at most one KernelWork per kernel row (the first offer), step figures, notes.
class WorkTable {
 public:
  explicit WorkTable(std::size_t kernel_rows) : slot_(kernel_rows, kEmpty) {}

  // Records `work` for kernel `row` unless a more trusted provider did; false when it was taken.
  bool offer(RowIndex row, KernelWork work);
  // Records `work` unless a step of the same phase and index was already given.
  bool offer_step(StepWork work);
  void note(Note note) { notes_.push_back(std::move(note)); }

  bool has(RowIndex row) const { return row < slot_.size() && slot_[row] != kEmpty; }
  // nullptr when no source accounted for the kernel.
  const KernelWork* find(RowIndex row) const { return has(row) ? &records_[slot_[row]] : nullptr; }
  std::size_t kernel_rows() const { return slot_.size(); }
  std::size_t covered() const { return records_.size(); }
  const std::vector<StepWork>& steps() const { return steps_; }
  const std::vector<Note>& notes() const { return notes_; }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  std::vector<std::uint32_t> slot_;  // per kernel row: index into records_, or kEmpty
  std::vector<KernelWork> records_;
  std::vector<StepWork> steps_;
  std::vector<Note> notes_;
};

// What a provider reads: the trace (kernels, API calls and NVTX loaded) and its options' values.
struct WorkRequest {
  const Trace& trace;
  const std::map<std::string, std::string>& options;
  // The value of one of the provider's options; "" when not given.
  std::string option(const std::string& name) const;
};

struct WorkProvider {
  std::string_view source;         // one of kSource*
  std::vector<OptionSpec> options;  // the provider's own options (roofline's spec lists them)
  Result<void> (*fill)(const WorkRequest& request, WorkTable& table);
};

// The providers, most trusted first (kernel_work_providers.cpp).
const std::vector<WorkProvider>& work_providers();

// Runs every provider in trust order on the trace; `options` holds the option values given
// (by name, without "--").
Result<WorkTable> collect_kernel_work(const Trace& trace, const std::map<std::string, std::string>& options);

}  // namespace kernscope
