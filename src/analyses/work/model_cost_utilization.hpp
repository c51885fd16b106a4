// Decode MBU and prefill MFU: the cost model's bytes and FLOPs per step (model_cost.hpp) over the
// trace's measured step times (StepAnalysis) and the GPU's peaks.
//
//   decode MBU  = bytes of the mean decode step / mean decode step time / peak DRAM bandwidth
//                 (Databricks' definition, with vLLM's bytes: weights, KV cache, activations)
//   prefill MFU = FLOPs of the prefill / prefill time / dense peak FLOP/s at the model's precision
//                 (PaLM's definition, forward only: 2 per multiply-add, causal attention)
// Each is given over the step as the user feels it (TPOT, TTFT) and over the GPU's kernel time
// alone (what the kernels achieve; the difference is launch and host time).
//   decode GEMV bandwidth efficiency = the weight matrices the matmuls read per decode step /
//                 the step's matmul kernel time (classes kProjectionClasses) / peak DRAM bandwidth:
//                 an aggregate over the step's projection kernels, for traces without shapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyses/work/gpu_peaks.hpp"
#include "analyses/work/kernel_work.hpp"
#include "analyses/work/model_cost.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// The peaks the figures divide by, with where each came from.
struct ModelPeaks {
  double bandwidth_bytes_per_s = 0;  // 0: unknown (no MBU)
  std::string bandwidth_source;
  std::optional<double> flops_per_s;  // dense, at the model's compute precision; nullopt: no MFU
  std::string flops_source;
  std::string why_missing;  // when a peak is unknown: why, and what to do (--peaks)
};

// The precision the model's matmuls run in: fp8 for fp8 checkpoints, else the activations' dtype
// (bf16, fp16, fp32); weight-only int4 (GPTQ, AWQ) computes in its activation dtype.
Precision model_precision(const ModelShape& shape);

// The device whose peaks apply: the one that ran the most kernel time (nullptr without devices).
const Device* busiest_device(const Trace& trace);

// The bandwidth a device reports (nsys's TARGET_INFO_GPU memoryBandwidth: memory clock x bus
// width x 2), for when no row of the peaks table fits it; no FLOP/s.
ModelPeaks peaks_from_device_properties(const Device& device);

// The peaks for the busiest device at `precision`: the user's rows (--peaks), then
// data/gpu_peaks.tsv (gpu_peaks.hpp's matching); without a fitting row, the device's own
// bandwidth and no FLOP/s, saying why.
ModelPeaks model_peaks(const Trace& trace, Precision precision, const std::vector<GpuPeaks>& user_rows);

struct ModelUtilization {
  std::vector<SpeedOfLight> figures;
  std::vector<Note> notes;  // the model's own figures first (kind model_cost), then its assumptions and figures left out
};

// `config_name` names the config in the sources ("llama_decode_workload.json").
ModelUtilization model_utilization(const ModelCost& cost, const std::string& config_name, const StepAnalysis& steps,
                                   const ModelPeaks& peaks);

}  // namespace kernscope
