// Kernel work from cuBLAS's own logs (`--cublas-log FILE`: CUBLAS_LOGINFO_DBG or
// CUBLASLT_LOG_LEVEL >= 2, of the same run as the trace): each GEMM call's 2·m·n·k·batch FLOPs in
// its precision and the least bytes it can move, given to the GEMM kernel it launched (joined by
// stream and order; readers/cublas_log/gemm_join.hpp).
#include <fmt/format.h>

#include <unordered_map>

#include "analyses/work/work_sources.hpp"
#include "kernscope/op_classes.hpp"
#include "readers/cublas_log/gemm_join.hpp"
#include "readers/cublas_log/gemm_log.hpp"

namespace kernscope {
namespace {

namespace cl = readers::cublas_log;

Precision precision_of(const cl::GemmCall& call) {
  std::string type = call.a_type;
  if (type.starts_with("C_")) type = "R_" + type.substr(2);  // complex: the rate of its real type
  if (type == "R_16BF") return Precision::kBf16;
  if (type == "R_16F") return Precision::kFp16;
  if (type == "R_64F") return Precision::kFp64;
  if (type.starts_with("R_8F")) return Precision::kFp8;
  if (type.starts_with("R_8I")) return Precision::kInt8;
  if (type.starts_with("R_4F")) return Precision::kFp4;
  if (type == "R_32F") {
    // FP32 inputs computed in lower precision on tensor cores (cublasComputeType_t's FAST modes).
    if (call.compute_type.find("TF32") != std::string::npos) return Precision::kTf32;
    if (call.compute_type.find("16BF") != std::string::npos) return Precision::kBf16;
    if (call.compute_type.find("16F") != std::string::npos) return Precision::kFp16;
    return Precision::kFp32;
  }
  return Precision::kOther;
}

// The trace's kernels cuBLAS launches for GEMM calls (the gemm and gemv classes of the built-in
// rules), without cuBLAS's helper kernels (split-K reductions, epilogues), which run after a GEMM
// kernel of the same call and would shift the pairing by one.
std::vector<RowIndex> gemm_kernel_rows(const Trace& trace) {
  const OpRuleSet& rules = OpRuleSet::builtin();
  std::unordered_map<StringId, bool> is_gemm;
  std::vector<RowIndex> rows;
  for (RowIndex r = 0; r < trace.kernels.size(); ++r) {
    const StringId id = trace.kernels.demangled_name[r];
    auto it = is_gemm.find(id);
    if (it == is_gemm.end()) {
      const std::string_view name = trace.strings.get(id);
      const std::string op_class = rules.classify(name).first;
      const bool helper = name.find("splitKreduce") != std::string_view::npos || name.find("epilogue") != std::string_view::npos;
      it = is_gemm.emplace(id, (op_class == "gemm" || op_class == "gemv") && !helper).first;
    }
    if (it->second) rows.push_back(r);
  }
  return rows;
}

std::string detail_of(const cl::GemmCall& c) {
  return fmt::format("{} m={} n={} k={}{} {}{} {} -> {} {}{}", c.function, c.m, c.n, c.k, c.batch > 1 ? fmt::format(" batch={}", c.batch) : "",
                     c.transa, c.transb, c.a_type, c.d_type, c.compute_type, c.epilogue.empty() ? "" : " " + c.epilogue);
}

}  // namespace

Result<LoggedGemmWork> cublas_log_work(const Trace& trace, const std::string& path) {
  auto log = cl::read_gemm_log(path);
  if (!log) return std::unexpected(log.error());
  const auto join = cl::join_gemm_calls(*log, trace, gemm_kernel_rows(trace));
  LoggedGemmWork out;
  out.calls = log->calls.size();
  for (std::size_t i = 0; i < log->calls.size(); ++i) {
    if (!join.trace_row[i]) continue;
    const cl::GemmCall& call = log->calls[i];
    KernelWork work;
    work.source = kSourceCublasLog;
    work.bytes_kind = BytesKind::kMinimum;
    work.bytes = call.min_bytes();
    work.add_flops(precision_of(call), call.flops());
    work.detail = detail_of(call);
    out.by_row.emplace(*join.trace_row[i], std::move(work));
  }
  for (const auto& n : log->notes) out.notes.push_back(note_from("cublas-log: ", n));
  out.notes.insert(out.notes.end(), join.notes.begin(), join.notes.end());
  return out;
}

Result<void> fill_cublas_log_work(const WorkRequest& request, WorkTable& table) {
  const std::string path = request.option("cublas-log");
  if (path.empty()) return {};
  auto logged = cublas_log_work(request.trace, path);
  if (!logged) return std::unexpected(logged.error());
  std::size_t taken = 0;  // kernels whose work a more trusted source already gave
  for (auto& [row, work] : logged->by_row) {
    if (!table.offer(row, std::move(work))) ++taken;
  }
  table.note({"gemm_calls_joined", NoteSeverity::kInfo,
              fmt::format("cublas-log: {} of {} GEMM call(s) in {} joined to the trace's GEMM kernels", logged->by_row.size(), logged->calls, path)});
  if (taken > 0) {
    table.note({"work_already_given", NoteSeverity::kInfo, fmt::format("cublas-log: {} kernel(s) already had work from a more trusted source", taken),
                static_cast<std::int64_t>(taken)});
  }
  for (const auto& n : logged->notes) table.note(n);
  return {};
}

}  // namespace kernscope
