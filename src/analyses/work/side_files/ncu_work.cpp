// Kernel work measured by Nsight Compute (`--ncu FILE`, a `--csv --page raw|details` export):
// DRAM bytes read + written and FLOPs by precision from ncu's counters, for the trace kernels its
// launches join to (by function name and invocation order, grid/block breaking ties). Where the
// export holds no FLOP counter (ncu's default sections), the FLOPs are unknown: with --cublas-log
// the kernel's GEMM call gives them beside the measured bytes; otherwise the kernel is left to the
// other sources (a measured byte count beside zero FLOPs would put a GEMM under the memory roof).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "analyses/work/work_sources.hpp"
#include "readers/ncu/ncu_join.hpp"
#include "readers/ncu/ncu_report.hpp"

namespace kernscope {
namespace {

namespace ncu = readers::ncu;

Precision precision_of(const ncu::FlopTerm& term) {
  const std::string& p = term.precision;
  if (!term.tensor) return p == "fp64" ? Precision::kFp64 : p == "fp32" ? Precision::kFp32 : Precision::kFp16;
  if (p == "bf16") return Precision::kBf16;
  if (p == "fp16" || p == "fp16_bf16_tf32") return Precision::kFp16;  // Turing's one counter: fp16 is its only such type
  if (p == "tf32") return Precision::kTf32;
  if (p == "fp64") return Precision::kFp64;
  if (p == "int8") return Precision::kInt8;
  if (p == "fp4") return Precision::kFp4;
  // Blackwell's fp4/fp6/fp8 path (kind f8f6f4) runs at the FP8 rate.
  if (p == "fp8" || p.find("fp6") != std::string::npos || p.find("fp8") != std::string::npos) return Precision::kFp8;
  return Precision::kOther;
}

// What ncu measured besides the work: throughputs, L2 hit rate, occupancy, the top stall reasons.
std::string measured_of(const ncu::NcuKernel& k) {
  std::string out;
  const auto add = [&](const char* label, const std::optional<double>& v) {
    if (v) out += fmt::format("{}{} {:.2f} %", out.empty() ? "" : ", ", label, *v);
  };
  add("SM", k.sm_throughput_pct);
  add("DRAM", k.dram_throughput_pct);
  add("tensor pipe", k.tensor_pipe_pct);
  add("L2 hit", k.l2_hit_rate_pct);
  add("occupancy", k.achieved_occupancy_pct);
  for (std::size_t i = 0; i < std::min<std::size_t>(3, k.stalls.size()); ++i) {
    out += fmt::format("{}{} {:.2f}", i == 0 ? (out.empty() ? "stalls " : "; stalls ") : ", ", k.stalls[i].reason, k.stalls[i].value);
  }
  return out;
}

std::string detail_of(const ncu::NcuKernel& k) {
  std::string flops;
  for (const auto& t : k.flops) {
    for (const auto& m : t.metrics) flops += (flops.empty() ? "" : " + ") + m;
  }
  const std::string measured = measured_of(k);
  return fmt::format("ncu ID {}{}: DRAM {}{}; FLOPs {}{}{}", k.id, k.invocation > 0 ? fmt::format(" (launch {})", k.invocation + 1) : "",
                     k.dram_bytes ? k.dram_bytes_metric : "not measured", k.dram_bytes_exact ? "" : " (from a rate)",
                     flops.empty() ? "not counted" : flops,
                     std::ranges::all_of(k.flops, [](const auto& t) { return t.exact; }) ? "" : " (from rates)",
                     measured.empty() ? "" : "; " + measured);
}

}  // namespace

Result<void> fill_ncu_work(const WorkRequest& request, WorkTable& table) {
  const std::string path = request.option("ncu");
  if (path.empty()) return {};
  auto report = ncu::read_ncu_csv(path);
  if (!report) return std::unexpected(report.error());
  const auto join = ncu::join_ncu_kernels(*report, request.trace);
  std::size_t offered = 0, taken = 0, without_flops = 0, without_bytes = 0, logged_flops = 0;
  std::string flop_reason;
  std::optional<LoggedGemmWork> logged;  // read when a kernel needs it
  for (std::size_t i = 0; i < report->kernels.size(); ++i) {
    const ncu::NcuKernel& k = report->kernels[i];
    if (!join.trace_row[i]) continue;
    const RowIndex row = *join.trace_row[i];
    KernelWork work;
    work.source = kSourceNcu;
    work.bytes_kind = BytesKind::kMeasured;
    work.detail = detail_of(k);
    if (k.flops.empty()) {
      if (!logged && !request.option("cublas-log").empty() && k.dram_bytes) {
        auto read = cublas_log_work(request.trace, request.option("cublas-log"));
        if (!read) return std::unexpected(read.error());
        logged = std::move(*read);
      }
      const auto from_log = logged && k.dram_bytes ? logged->by_row.find(row) : decltype(logged->by_row.end()){};
      if (!logged || !k.dram_bytes || from_log == logged->by_row.end()) {
        ++without_flops;
        if (flop_reason.empty() && !k.flop_notes.empty()) flop_reason = k.flop_notes.front().text;
        continue;
      }
      work.flops = from_log->second.flops;
      work.detail += "; FLOPs from cublas-log: " + from_log->second.detail;
      ++logged_flops;
    }
    work.bytes = k.dram_bytes.value_or(0);
    if (!k.dram_bytes) ++without_bytes;
    for (const auto& t : k.flops) work.add_flops(precision_of(t), t.flops);
    if (table.offer(*join.trace_row[i], std::move(work))) {
      ++offered;
    } else {
      ++taken;
    }
  }
  table.note({"profiled_launches_joined", NoteSeverity::kInfo,
              fmt::format("ncu: {} of {} profiled launch(es) in {} joined to the trace's kernels; {} with measured work", join.matched,
                          report->kernels.size(), path, offered)});
  if (logged_flops > 0) {
    table.note({"flops_from_cublas_log", NoteSeverity::kInfo,
                fmt::format("ncu: {} launch(es) without FLOP counters took their FLOPs from the cuBLAS log, beside their measured bytes",
                            logged_flops),
                static_cast<std::int64_t>(logged_flops)});
  }
  if (without_flops > 0) {
    table.note({"launches_without_flops", NoteSeverity::kInfo,
                fmt::format("ncu: {} joined launch(es) have no FLOP counter in the export and are left to other sources{}", without_flops,
                            flop_reason.empty() ? "" : " (" + flop_reason + ")"),
                static_cast<std::int64_t>(without_flops)});
  }
  if (without_bytes > 0) {
    table.note({"launches_without_bytes", NoteSeverity::kInfo,
                fmt::format("ncu: {} launch(es) have FLOPs but no DRAM byte counter (bytes 0)", without_bytes),
                static_cast<std::int64_t>(without_bytes)});
  }
  if (taken > 0) {
    table.note({"work_already_given", NoteSeverity::kInfo, fmt::format("ncu: {} kernel(s) already had work from a more trusted source", taken),
                static_cast<std::int64_t>(taken)});
  }
  for (const auto& n : join.notes) table.note(n);
  return {};
}

}  // namespace kernscope
