// The roofline: kernel work over time against the GPU's roofs (conventions in roofline.hpp).
#include "analyses/work/roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace kernscope {
namespace {

struct Instance {
  double memory_ns = 0, compute_ns = 0, ideal_ns = 0;
  Roof roof = Roof::kUnknown;
};

// One kernel instance against the roofs; `unpeaked` counts FLOPs of precisions without a peak.
Instance place(const KernelWork& w, const GpuPeaks* peaks, double duration_ns, double floor_ns, double& unpeaked) {
  Instance in;
  if (!peaks) return in;
  in.memory_ns = w.bytes / peaks->bandwidth_bytes_per_s * 1e9;
  for (std::size_t p = 0; p < kPrecisionCount; ++p) {
    if (w.flops[p] <= 0) continue;
    if (auto peak = peaks->flops_per_s[p]) in.compute_ns += w.flops[p] / *peak * 1e9;
    else unpeaked += w.flops[p];
  }
  const double raw = std::max(in.memory_ns, in.compute_ns);
  if (raw < floor_ns) {
    in.roof = Roof::kLatency;
    in.ideal_ns = std::max(raw, std::min(floor_ns, duration_ns));
  } else {
    in.roof = in.compute_ns > in.memory_ns ? Roof::kCompute : Roof::kMemory;
    in.ideal_ns = raw;
  }
  return in;
}

struct Accumulator {
  RooflineRow row;
  std::set<std::string_view> sources;
  std::array<double, 4> ideal_by_roof{};  // by Roof
};

std::string kernel_name(const Trace& t, RowIndex i) {
  return std::string(t.strings.get(t.kernels.shown_name(i)));
}

// The device whose kernels took the most time: its peaks are the roofs.
const Device* main_device(const Trace& trace) {
  std::map<std::uint32_t, std::int64_t> ns;
  for (RowIndex i = 0; i < trace.kernels.size(); ++i) ns[trace.kernels.device_id[i]] += trace.kernels.end_ns[i] - trace.kernels.start_ns[i];
  const Device* best = nullptr;
  std::int64_t most = -1;
  for (const auto& d : trace.devices) {
    auto it = ns.find(static_cast<std::uint32_t>(d.id));
    const std::int64_t v = it == ns.end() ? 0 : it->second;
    if (v > most) {
      most = v;
      best = &d;
    }
  }
  return best;
}

// Decode MBU, the decode GEMVs' bandwidth efficiency and prefill MFU, from the steps of the last
// group of each phase (as report's TPOT/TTFT), where the trace has phases.
void phase_headline(const Trace& trace, const WorkTable& work, const RooflineOptions& options, const GpuPeaks& peaks,
                    RooflineResult& result) {
  if (!options.rules) return;
  std::optional<StepAnalysis> found;
  const StepAnalysis* steps = options.step_analysis;
  if (!steps) {
    auto analysed = analyze_steps(trace, *options.rules, options.steps);
    if (!analysed) return;
    found = std::move(*analysed);
    steps = &*found;
  }
  if (steps->steps.empty()) return;
  const auto& k = trace.kernels;
  auto last_group = [&](Phase phase) -> const StepGroup* {
    const StepGroup* last = nullptr;
    for (const auto& g : steps->groups) {
      if (g.phase == phase && (!last || g.first_start_ns > last->first_start_ns)) last = &g;
    }
    return last;
  };
  // The rules are regular expressions: each distinct kernel name is classified once.
  std::unordered_map<StringId, bool> gemv_of_name;
  auto is_gemv = [&](RowIndex i) {
    const StringId id = k.shown_name(i);
    auto it = gemv_of_name.find(id);
    if (it == gemv_of_name.end()) it = gemv_of_name.emplace(id, options.rules->classify(trace.strings.get(id)).first == "gemv").first;
    return it->second;
  };
  for (Phase phase : {Phase::kDecode, Phase::kPrefill}) {
    const StepGroup* group = last_group(phase);
    if (!group) continue;
    // The group's steps, and a flag by step index (a kernel's step is read for each of the
    // millions of kernels).
    std::vector<std::int32_t> members;
    std::vector<char> member(steps->steps.size(), 0);
    double step_ns = 0;
    for (std::size_t s = 0; s < steps->steps.size(); ++s) {
      const auto& st = steps->steps[s];
      if (st.group == group->name && st.phase == phase) {
        member[s] = 1;
        members.push_back(static_cast<std::int32_t>(s));
        step_ns += static_cast<double>(std::max(st.wall_ns, st.gpu_span_ns));
      }
    }
    auto in_group = [&](std::int32_t step) { return step >= 0 && member[static_cast<std::size_t>(step)]; };
    if (members.empty() || step_ns <= 0) continue;
    // Analytic per-step work (a model config) where a provider gave it, else the kernels' work.
    const StepWork* analytic = nullptr;
    for (const auto& sw : work.steps()) {
      if (sw.phase == phase && sw.index < 0) analytic = &sw;
    }
    double flops = 0, bytes = 0, kernel_ns = 0, covered_ns = 0, gemv_bytes = 0, gemv_ns = 0;
    // The same GEMVs as the roofline places them (the latency floor applied per launch): the gemv
    // row's "% of Roof" where its kernels are these, said beside the bandwidth efficiency.
    double gemv_ideal_ns = 0, gemv_unpeaked = 0;
    std::int64_t gemv_launches = 0, gemv_under_floor = 0;
    std::array<double, kPrecisionCount> by_precision{};
    for (RowIndex i = 0; i < k.size(); ++i) {
      if (i >= steps->kernel_step.size() || !in_group(steps->kernel_step[i])) continue;
      const double ns = static_cast<double>(k.end_ns[i] - k.start_ns[i]);
      kernel_ns += ns;
      const KernelWork* w = work.find(i);
      if (!w) continue;
      covered_ns += ns;
      flops += w->total_flops();
      bytes += w->bytes;
      for (std::size_t p = 0; p < kPrecisionCount; ++p) by_precision[p] += w->flops[p];
      if (is_gemv(i)) {
        gemv_bytes += w->bytes;
        gemv_ns += ns;
        const Instance in = place(*w, &peaks, ns, options.latency_floor_ns, gemv_unpeaked);
        gemv_ideal_ns += in.ideal_ns;
        gemv_launches += 1;
        if (in.roof == Roof::kLatency) gemv_under_floor += 1;
      }
    }
    const double n = static_cast<double>(members.size());
    RooflineHeadline base;
    base.phase = phase;
    base.group = group->name;
    base.steps = members.size();
    base.step_ns = step_ns / n;
    if (analytic) {
      flops = analytic->total_flops() * n;
      bytes = analytic->bytes * n;
      by_precision = analytic->flops;
      for (auto& v : by_precision) v *= n;
      base.work_source = analytic->source;
      base.work_detail = analytic->detail;
    } else {
      if (covered_ns <= 0) continue;
      // A speed-of-light figure from the work of a minority of the kernels says little of the step:
      // given only where the known work covers half its kernel time or more.
      if (2 * covered_ns < kernel_ns) {
        result.withheld.push_back(RooflineWithheld{phase, group->name, covered_ns / kernel_ns});
        continue;
      }
      base.covered_share = covered_ns / kernel_ns;
    }
    if (phase == Phase::kDecode) {
      RooflineHeadline mbu = base;
      mbu.kind = RooflineHeadline::Kind::kDecodeMbu;
      mbu.per_step = bytes / n;
      mbu.achieved = bytes / (step_ns / 1e9);
      mbu.peak = peaks.bandwidth_bytes_per_s;
      result.headline.push_back(mbu);
      if (gemv_ns <= 0 && analytic && analytic->matmul_weight_bytes > 0) {
        // No work per kernel (no shapes), but a model config: its weight matrices over the time of
        // every matmul kernel of the steps, an aggregate over the step's projection kernels.
        double projection_ns = 0;
        for (std::int32_t s : members) {
          for (std::string_view c : kProjectionClasses) {
            const auto& by_class = steps->steps[static_cast<std::size_t>(s)].class_ns;
            if (auto it = by_class.find(std::string(c)); it != by_class.end()) projection_ns += static_cast<double>(it->second);
          }
        }
        if (projection_ns > 0) {
          RooflineHeadline aggregate = base;
          aggregate.kind = RooflineHeadline::Kind::kDecodeGemvAggregate;
          aggregate.per_step = analytic->matmul_weight_bytes;
          aggregate.kernel_ns = projection_ns;
          aggregate.achieved = analytic->matmul_weight_bytes * n / (projection_ns / 1e9);
          aggregate.peak = peaks.bandwidth_bytes_per_s;
          result.headline.push_back(aggregate);
        }
      }
      if (gemv_ns > 0) {
        // Two figures of the same launches that differ by definition: the efficiency is bytes over
        // kernel time against the peak bandwidth (no floor, the MBU convention); against their roof a
        // launch whose bytes need less than the latency floor at peak is held to that floor (what a
        // launch can take at best), so it is the higher where small GEMVs (k/v projections) are many.
        RooflineHeadline gemv = base;
        gemv.kind = RooflineHeadline::Kind::kDecodeGemv;
        gemv.bytes = gemv_bytes;
        gemv.kernel_ns = gemv_ns;
        gemv.achieved = gemv_bytes / (gemv_ns / 1e9);
        gemv.peak = peaks.bandwidth_bytes_per_s;
        gemv.ideal_ns = gemv_ideal_ns;
        gemv.launches = gemv_launches;
        gemv.under_floor = gemv_under_floor;
        for (RowIndex i = 0; i < k.size(); ++i) gemv.launches_in_trace += is_gemv(i) && work.find(i) ? 1 : 0;
        result.headline.push_back(gemv);
      }
    } else {
      // MFU against the peak of the precision that did most of the FLOPs.
      const auto top = static_cast<std::size_t>(std::max_element(by_precision.begin(), by_precision.end()) - by_precision.begin());
      const auto peak = peaks.flops_per_s[top];
      if (!peak || flops <= 0) continue;
      RooflineHeadline mfu = base;
      mfu.kind = RooflineHeadline::Kind::kPrefillMfu;
      mfu.per_step = flops / n;
      mfu.achieved = flops / (step_ns / 1e9);
      mfu.peak = *peak;
      mfu.precision = static_cast<Precision>(top);
      result.headline.push_back(mfu);
    }
  }
}

}  // namespace

Result<RooflineGrouping> parse_roofline_grouping(std::string_view text) {
  if (text == "kernel") return RooflineGrouping::kKernel;
  if (text == "class") return RooflineGrouping::kClass;
  if (text == "step") return RooflineGrouping::kStep;
  return make_error(ErrorCode::kInvalidArgument, "roofline: --by must be kernel, class or step (not '" + std::string(text) + "')");
}

std::string_view roof_name(Roof roof) {
  switch (roof) {
    case Roof::kMemory: return "memory";
    case Roof::kCompute: return "compute";
    case Roof::kLatency: return "latency";
    case Roof::kUnknown: return "";
  }
  return "";
}

Result<RooflineResult> roofline(const Trace& trace, const RooflineOptions& options) {
  if (trace.kernels.size() == 0) return make_error(ErrorCode::kNoData, "roofline: the trace has no kernels");
  if (options.latency_floor_ns < 0) return make_error(ErrorCode::kInvalidArgument, "roofline: the latency floor must be 0 or more");
  auto work = collect_kernel_work(trace, options.provider_options);
  if (!work) return std::unexpected(work.error());
  RooflineResult result;
  result.latency_floor_ns = options.latency_floor_ns;
  if (!work->steps().empty()) result.step_work_source = std::string(work->steps().front().source);
  if (const Device* device = main_device(trace)) {
    result.peaks = match_gpu_peaks(*device, options.user_peaks);
  } else if (options.user_peaks.size() == 1 && options.user_peaks[0].match == "*") {
    result.peaks.peaks = options.user_peaks[0];
    result.peaks.device = "(the trace names no device)";
    result.peaks.note = fmt::format("peaks of {} ({}): the trace names no device", options.user_peaks[0].name, options.user_peaks[0].origin);
  } else {
    result.peaks.note = "the trace records no device properties: give the GPU's peaks with --peaks FILE (one row with match '*')";
  }
  const GpuPeaks* peaks = result.peaks.peaks ? &*result.peaks.peaks : nullptr;

  // Group keys: each kernel's key is a number into `keys`, each distinct key spelled once (a
  // string per kernel held 183 MiB of the 1 GB export's report, bench/RESULTS.md).
  const auto& k = trace.kernels;
  std::vector<std::string> keys;
  std::unordered_map<std::string, std::uint32_t> key_number;
  auto number_of = [&](std::string key) {
    auto [it, added] = key_number.emplace(std::move(key), static_cast<std::uint32_t>(keys.size()));
    if (added) keys.push_back(it->first);
    return it->second;
  };
  std::vector<std::uint32_t> key_of(k.size());
  std::optional<StepAnalysis> found_steps;
  const StepAnalysis* steps = options.step_analysis;
  if (options.grouping == RooflineGrouping::kStep && !steps) {
    if (!options.rules) return make_error(ErrorCode::kInternal, "roofline: --by step needs operation rules");
    auto analysed = analyze_steps(trace, *options.rules, options.steps);
    if (!analysed) return std::unexpected(analysed.error());
    found_steps = std::move(*analysed);
    steps = &*found_steps;
  }
  std::unordered_map<StringId, std::uint32_t> key_of_name;  // --by kernel and class: by name id
  std::unordered_map<std::int32_t, std::uint32_t> key_of_step;  // --by step: by step number
  struct StepKey {
    Phase phase = Phase::kUnknown;
    std::set<std::int32_t> steps;  // the steps of that name and phase with kernels
  };
  std::map<std::string, StepKey> step_keys;  // --by step: each row's phase and steps
  for (RowIndex i = 0; i < k.size(); ++i) {
    switch (options.grouping) {
      case RooflineGrouping::kKernel:
      case RooflineGrouping::kClass: {
        const StringId id = k.shown_name(i);
        auto it = key_of_name.find(id);
        if (it == key_of_name.end()) {
          std::string key = options.grouping == RooflineGrouping::kKernel ? kernel_name(trace, i)
                            : options.rules ? options.rules->classify(trace.strings.get(id)).first
                                            : "other";
          it = key_of_name.emplace(id, number_of(std::move(key))).first;
        }
        key_of[i] = it->second;
        break;
      }
      case RooflineGrouping::kStep: {
        const std::int32_t s = i < steps->kernel_step.size() ? steps->kernel_step[i] : -1;
        auto it = key_of_step.find(s);
        if (it == key_of_step.end()) {
          it = key_of_step.emplace(s, number_of(s < 0 ? "(outside steps)"
                                                      : fmt::format("{} ({})", steps->steps[static_cast<std::size_t>(s)].name,
                                                                    phase_name(steps->steps[static_cast<std::size_t>(s)].phase))))
                   .first;
        }
        key_of[i] = it->second;
        if (s >= 0) {
          auto& key = step_keys[keys[key_of[i]]];
          key.phase = steps->steps[static_cast<std::size_t>(s)].phase;
          key.steps.insert(s);
        }
        break;
      }
    }
  }

  // Accumulated by key number and whether the kernel has work, in kernel order; then keyed by
  // name as the rows are ordered.
  std::vector<std::array<std::optional<Accumulator>, 2>> by_key(keys.size());
  double unpeaked = 0;
  for (RowIndex i = 0; i < k.size(); ++i) {
    const std::int64_t ns = k.end_ns[i] - k.start_ns[i];
    result.kernel_ns += ns;
    const KernelWork* w = work->find(i);
    auto& slot = by_key[key_of[i]][w != nullptr ? 1 : 0];
    if (!slot) slot.emplace().row.name = keys[key_of[i]];
    auto& acc = *slot;
    acc.row.count += 1;
    acc.row.time_ns += ns;
    if (!w) continue;
    result.covered_ns += ns;
    result.covered_by_source[std::string(w->source)] += ns;
    acc.row.has_work = true;
    acc.row.flops += w->total_flops();
    acc.row.bytes += w->bytes;
    acc.sources.insert(w->source);
    const Instance in = place(*w, peaks, static_cast<double>(ns), options.latency_floor_ns, unpeaked);
    acc.row.memory_ns += in.memory_ns;
    acc.row.compute_ns += in.compute_ns;
    acc.row.ideal_ns += in.ideal_ns;
    acc.ideal_by_roof[static_cast<std::size_t>(in.roof)] += in.ideal_ns;
  }
  std::vector<std::uint32_t>().swap(key_of);
  std::map<std::pair<std::string, bool>, Accumulator> rows;
  for (std::size_t key = 0; key < by_key.size(); ++key) {
    for (bool with_work : {false, true}) {
      if (auto& slot = by_key[key][with_work ? 1 : 0]) rows.emplace(std::make_pair(keys[key], with_work), std::move(*slot));
    }
  }
  // --by step with analytic work of a whole step (a model config): a step row's work is that work
  // times its steps, in place of its kernels' (the analytic figure already counts the whole step),
  // and its kernel time is what that work is placed against.
  for (const auto& [name, key] : step_keys) {
    const StepWork* analytic = nullptr;
    for (const auto& sw : work->steps()) {
      if (sw.phase == key.phase && sw.index < 0) analytic = &sw;
    }
    if (!analytic || key.steps.empty()) continue;
    Accumulator merged;
    merged.row.name = name;
    for (bool with_work : {false, true}) {
      auto it = rows.find({name, with_work});
      if (it == rows.end()) continue;
      merged.row.count += it->second.row.count;
      merged.row.time_ns += it->second.row.time_ns;
      if (!with_work) {
        result.covered_ns += it->second.row.time_ns;
        result.covered_by_source[std::string(analytic->source)] += it->second.row.time_ns;
      }
      rows.erase(it);
    }
    const double n = static_cast<double>(key.steps.size());
    KernelWork per_step;
    per_step.flops = analytic->flops;
    per_step.bytes = analytic->bytes;
    per_step.source = analytic->source;
    const Instance in = place(per_step, peaks, static_cast<double>(merged.row.time_ns) / n, options.latency_floor_ns, unpeaked);
    merged.row.has_work = true;
    merged.row.flops = analytic->total_flops() * n;
    merged.row.bytes = analytic->bytes * n;
    merged.row.memory_ns = in.memory_ns * n;
    merged.row.compute_ns = in.compute_ns * n;
    merged.row.ideal_ns = in.ideal_ns * n;
    merged.ideal_by_roof[static_cast<std::size_t>(in.roof)] += in.ideal_ns * n;
    merged.sources.insert(analytic->source);
    rows[{name, true}] = std::move(merged);
  }
  for (auto& [key, acc] : rows) {
    (void)key;
    RooflineRow row = std::move(acc.row);
    if (row.has_work && peaks) {
      // The roof that bounds most of the row's ideal time.
      const auto top = std::max_element(acc.ideal_by_roof.begin(), acc.ideal_by_roof.begin() + 3);
      row.roof = static_cast<Roof>(top - acc.ideal_by_roof.begin());
    }
    for (auto s : acc.sources) row.source += (row.source.empty() ? "" : "+") + std::string(s);
    if (!row.has_work) row.source = "none";
    result.rows.push_back(std::move(row));
  }
  std::stable_sort(result.rows.begin(), result.rows.end(), [](const RooflineRow& a, const RooflineRow& b) {
    if (a.has_work != b.has_work) return a.has_work;
    if (a.has_work && a.recoverable_ns() != b.recoverable_ns()) return a.recoverable_ns() > b.recoverable_ns();
    return a.time_ns > b.time_ns;
  });

  result.notes = work->notes();
  if (unpeaked > 0) {
    result.notes.push_back({"flops_without_peak", NoteSeverity::kInfo,
                            fmt::format("{:.3g} FLOPs are of a precision the GPU's row gives no peak for: left out of the compute roof", unpeaked)});
  }
  if (peaks) phase_headline(trace, *work, options, *peaks, result);
  return result;
}

Table roofline_table(const RooflineResult& result, std::size_t limit) {
  Table t;
  t.report = "roofline";
  t.title = "Speed of light";
  for (const char* name : {"Name", "Count", "Time (ns)", "FLOPs", "Bytes", "Intensity (FLOP/B)", "TFLOP/s", "GB/s", "Roof",
                           "% of Roof", "Ideal (ns)", "Recoverable (ns)", "Source"}) {
    t.columns.push_back({name, Unit::kNone});
  }
  auto rounded = [](double v, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return Cell(std::round(v * scale) / scale);
  };
  const bool peaks = result.peaks.peaks.has_value();
  for (const auto& r : result.rows) {
    if (limit > 0 && t.rows.size() >= limit) break;
    std::vector<Cell> row{r.name, r.count, r.time_ns};
    if (!r.has_work) {
      row.resize(12);
      row.push_back(r.source);
      t.rows.push_back(std::move(row));
      continue;
    }
    const double seconds = static_cast<double>(r.time_ns) / 1e9;
    row.push_back(static_cast<std::int64_t>(std::llround(r.flops)));
    row.push_back(static_cast<std::int64_t>(std::llround(r.bytes)));
    row.push_back(r.bytes > 0 ? rounded(r.flops / r.bytes, 2) : Cell());
    row.push_back(seconds > 0 ? rounded(r.flops / seconds / 1e12, 3) : Cell());
    row.push_back(seconds > 0 ? rounded(r.bytes / seconds / 1e9, 1) : Cell());
    if (peaks) {
      row.push_back(std::string(roof_name(r.roof)));
      row.push_back(rounded(r.percent_of_roof(), 1));
      row.push_back(static_cast<std::int64_t>(std::llround(r.ideal_ns)));
      row.push_back(static_cast<std::int64_t>(std::llround(r.recoverable_ns())));
    } else {
      row.resize(row.size() + 4);
    }
    row.push_back(r.source);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace kernscope
