// Decode MBU and prefill MFU from the cost model, the trace's steps and the peaks
// (model_cost_utilization.hpp says what each divides).
#include "analyses/work/model_cost_utilization.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace kernscope {
namespace {

std::string gb(double bytes) { return fmt::format("{:.3f} GB", bytes / 1e9); }
std::string mb(double bytes) { return fmt::format("{:.2f} MB", bytes / 1e6); }

const StepGroup* last_group(const StepAnalysis& steps, Phase phase) {
  const StepGroup* last = nullptr;
  for (const auto& g : steps.groups) {
    if (g.phase == phase) last = &g;
  }
  return last;
}

SpeedOfLight figure(std::string name, double work, std::string unit, double time_ns, double peak_per_s) {
  SpeedOfLight f;
  f.name = std::move(name);
  f.work = work;
  f.work_unit = std::move(unit);
  f.time_ns = time_ns;
  f.peak_per_s = peak_per_s;
  f.fraction = time_ns > 0 && peak_per_s > 0 ? work / (time_ns * 1e-9) / peak_per_s : 0;
  return f;
}

void decode_figures(const ModelCost& cost, const std::string& config, const StepAnalysis& steps, const ModelPeaks& peaks,
                    ModelUtilization& out) {
  if (cost.decode_steps == 0) {
    out.notes.push_back({"no_decode_modelled", NoteSeverity::kInfo,
                         "no decode MBU: --output-tokens 1 models no decode step (the prefill makes the only token)"});
    return;
  }
  const StepGroup* group = last_group(steps, Phase::kDecode);
  if (!group || steps.tpot.count == 0) {
    out.notes.push_back({"no_decode_steps", NoteSeverity::kInfo, "no decode MBU: the trace has no decode steps (kernscope steps shows what it found)"});
    return;
  }
  if (peaks.bandwidth_bytes_per_s <= 0) {
    out.notes.push_back({"peak_unknown", NoteSeverity::kInfo, "no decode MBU: " + peaks.why_missing});
    return;
  }
  if (group->wall.count != cost.decode_steps) {
    out.notes.push_back({"decode_step_counts_differ", NoteSeverity::kInfo,
                         fmt::format("the trace's decode group '{}' has {} steps; the model was given {} (--output-tokens {}): "
                                     "the mean step's KV context may differ from the trace's",
                                     group->name, group->wall.count, cost.decode_steps, cost.run.output)});
  }
  const auto& c = cost.decode_mean;
  const std::string work_source = fmt::format(
      "{}: weights {} + KV cache read {} + written {} + activations {} = {} per decode step, mean of {} steps "
      "(batch {}, prompt {}, contexts {}..{}; {} weights)",
      config, gb(c.weight_bytes), mb(c.kv_read_bytes), mb(c.kv_write_bytes), mb(c.activation_bytes), gb(c.bytes()),
      cost.decode_steps, cost.run.batch, cost.run.prompt, cost.run.prompt + 1, cost.run.prompt + cost.decode_steps,
      cost.shape.linear.name);
  auto per_step = figure("decode MBU", c.bytes(), "B", steps.tpot.mean, peaks.bandwidth_bytes_per_s);
  per_step.work_source = work_source;
  per_step.time_source = fmt::format("TPOT, mean of {} decode steps of '{}' (from the {})", steps.tpot.count, group->name,
                                     steps.tpot_from);
  per_step.peak_source = peaks.bandwidth_source;
  out.figures.push_back(per_step);
  if (steps.decode_kernel_ns.count > 0) {
    auto kernels = figure("decode MBU over kernel time", c.bytes(), "B", steps.decode_kernel_ns.mean, peaks.bandwidth_bytes_per_s);
    kernels.work_source = work_source;
    kernels.time_source = fmt::format("kernel time per decode step (durations summed), mean of {} steps of '{}'",
                                      steps.decode_kernel_ns.count, group->name);
    kernels.peak_source = peaks.bandwidth_source;
    out.figures.push_back(kernels);
  }
  // The decode GEMVs' bandwidth efficiency without shapes: the weight matrices the model's matmuls
  // read per step over the time of the step's matmul kernels (every projection class, so split-K
  // reductions and GEMM-shaped LM heads count), an aggregate over those kernels.
  double projection_ns = 0;
  std::int64_t members = 0;
  for (const auto& st : steps.steps) {
    if (st.phase != Phase::kDecode || st.group != group->name) continue;
    ++members;
    for (std::string_view c : kProjectionClasses) {
      if (auto it = st.class_ns.find(std::string(c)); it != st.class_ns.end()) projection_ns += static_cast<double>(it->second);
    }
  }
  if (members > 0 && projection_ns > 0 && c.matmul_weight_bytes > 0) {
    auto gemv = figure("decode GEMV bandwidth efficiency", c.matmul_weight_bytes, "B", projection_ns / static_cast<double>(members),
                       peaks.bandwidth_bytes_per_s);
    gemv.work_source = fmt::format("{}: the weight matrices the matmul kernels read per decode step, {} ({} weights)", config,
                                   gb(c.matmul_weight_bytes), cost.shape.linear.name);
    gemv.time_source = fmt::format("kernel time of the classes {} per decode step (an aggregate over the step's projection "
                                   "kernels), mean of {} steps of '{}'",
                                   fmt::join(kProjectionClasses, ", "), members, group->name);
    gemv.peak_source = peaks.bandwidth_source;
    out.figures.push_back(gemv);
  }
}

void prefill_figures(const ModelCost& cost, const std::string& config, const StepAnalysis& steps, const ModelPeaks& peaks,
                     ModelUtilization& out) {
  const StepGroup* group = last_group(steps, Phase::kPrefill);
  if (!group) {
    out.notes.push_back({"no_prefill_step", NoteSeverity::kInfo, "no prefill MFU: the trace has no prefill step"});
    return;
  }
  if (!peaks.flops_per_s) {
    out.notes.push_back({"peak_unknown", NoteSeverity::kInfo, "no prefill MFU: " + peaks.why_missing});
    return;
  }
  const auto& c = cost.prefill;
  const std::string work_source = fmt::format(
      "{}: {:.2f} TFLOP = linear {:.2f} + causal attention {:.2f} (batch {} x prompt {} tokens, logits for {} token{}; "
      "matmuls only, 2 FLOPs per multiply-add)",
      config, c.flops() / 1e12, c.linear_flops / 1e12, c.attention_flops / 1e12, cost.run.batch, cost.run.prompt,
      cost.run.prefill_logits_all ? "every" : "the last", cost.run.prefill_logits_all ? "" : " of each sequence");
  const double ttft = steps.ttft.count ? steps.ttft.mean : group->wall.mean;
  auto per_step = figure("prefill MFU", c.flops(), "FLOP", ttft, *peaks.flops_per_s);
  per_step.work_source = work_source;
  per_step.time_source = steps.ttft.count ? fmt::format("TTFT of '{}' (from its start, the request's set-up included, until its first token reaches the host, else its host range or GPU work ends)", group->name)
                                          : fmt::format("wall of '{}'", group->name);
  per_step.peak_source = peaks.flops_source;
  out.figures.push_back(per_step);
  if (group->kernel_ns.count > 0) {
    auto kernels = figure("prefill MFU over kernel time", c.flops(), "FLOP", group->kernel_ns.mean, *peaks.flops_per_s);
    kernels.work_source = work_source;
    kernels.time_source = fmt::format("kernel time of '{}' (durations summed)", group->name);
    kernels.peak_source = peaks.flops_source;
    out.figures.push_back(kernels);
  }
}

}  // namespace

Precision model_precision(const ModelShape& shape) {
  if (shape.linear.name.starts_with("fp8")) return Precision::kFp8;
  if (shape.activation_bytes == 4) return Precision::kFp32;
  std::string_view dtype = shape.dtype;
  if (dtype.starts_with("torch.")) dtype.remove_prefix(6);
  return dtype == "float16" || dtype == "half" ? Precision::kFp16 : Precision::kBf16;
}

const Device* busiest_device(const Trace& trace) {
  if (trace.devices.empty()) return nullptr;
  std::map<std::uint32_t, std::int64_t> ns;
  const auto& k = trace.kernels;
  for (std::size_t i = 0; i < k.size(); ++i) ns[k.device_id[i]] += k.end_ns[i] - k.start_ns[i];
  const Device* best = &trace.devices.front();
  std::int64_t best_ns = -1;
  for (const auto& d : trace.devices) {
    auto it = ns.find(static_cast<std::uint32_t>(d.id));
    const std::int64_t t = it == ns.end() ? 0 : it->second;
    if (t > best_ns) {
      best = &d;
      best_ns = t;
    }
  }
  return best;
}

ModelPeaks peaks_from_device_properties(const Device& device) {
  ModelPeaks p;
  p.bandwidth_bytes_per_s = static_cast<double>(device.memory_bandwidth_bytes_per_s);
  if (p.bandwidth_bytes_per_s > 0) {
    p.bandwidth_source = fmt::format("{}: {:.0f} GB/s, the bandwidth the trace records for the device (memory clock x bus width x 2)",
                                     device.name, p.bandwidth_bytes_per_s / 1e9);
  }
  p.why_missing = fmt::format("no peak known for '{}' (give one with --peaks FILE, e.g. what kernscope-peaks measures)",
                              device.name.empty() ? "the device" : device.name);
  return p;
}

ModelPeaks model_peaks(const Trace& trace, Precision precision, const std::vector<GpuPeaks>& user_rows) {
  const Device* device = busiest_device(trace);
  if (!device) {
    ModelPeaks none;
    none.why_missing = "the trace names no device, so no peak is known (give one with --peaks FILE)";
    return none;
  }
  const PeakMatch match = match_gpu_peaks(*device, user_rows);
  if (!match.peaks) {
    ModelPeaks own = peaks_from_device_properties(*device);
    own.why_missing = match.note;
    return own;
  }
  const GpuPeaks& row = *match.peaks;
  ModelPeaks p;
  p.bandwidth_bytes_per_s = row.bandwidth_bytes_per_s;
  p.bandwidth_source = fmt::format("{} {:.0f} GB/s; {}", row.name, row.bandwidth_bytes_per_s / 1e9, match.note);
  p.flops_per_s = row.peak(precision);
  if (p.flops_per_s) {
    p.flops_source = fmt::format("{} dense {} {:.1f} TFLOP/s; {}", row.name, precision_name(precision), *p.flops_per_s / 1e12, match.note);
  } else {
    p.why_missing = fmt::format("{} ({}) has no {} peak", row.name, row.origin, precision_name(precision));
  }
  return p;
}

ModelUtilization model_utilization(const ModelCost& cost, const std::string& config_name, const StepAnalysis& steps,
                                   const ModelPeaks& peaks) {
  ModelUtilization out;
  // What the model costs, whatever the trace: the figures below divide these.
  const auto& s = cost.shape;
  std::string summary = fmt::format(
      "{}: {:.4g} B parameters ({:.4g} B active per token), {} layers, {} heads / {} KV heads of {}, KV cache {:.0f} B per token; "
      "prefill {:.4g} TFLOP and {} for batch {} x {} tokens",
      config_name, cost.params.total / 1e9, cost.params.active / 1e9, s.layers, s.heads, s.kv_heads, s.head_dim,
      cost.kv_bytes_per_token, cost.prefill.flops() / 1e12, gb(cost.prefill.bytes()), cost.run.batch, cost.run.prompt);
  if (cost.decode_steps > 0) {
    summary += fmt::format("; a decode step {:.4g} GFLOP and {} (mean of {}; first {}, last {})", cost.decode_mean.flops() / 1e9,
                           gb(cost.decode_mean.bytes()), cost.decode_steps, gb(cost.decode_first.bytes()), gb(cost.decode_last.bytes()));
  }
  out.notes.push_back({"model_cost", NoteSeverity::kInfo, summary});
  out.notes.insert(out.notes.end(), s.notes.begin(), s.notes.end());
  decode_figures(cost, config_name, steps, peaks, out);
  prefill_figures(cost, config_name, steps, peaks, out);
  return out;
}

}  // namespace kernscope
