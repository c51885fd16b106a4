#include "readers/cublas_log/gemm_log.hpp"

#include "readers/ncu/text_input.hpp"

namespace kernscope::readers::cublas_log {

double element_bytes(std::string_view type) {
  if (type.starts_with("CUDA_")) type.remove_prefix(5);
  const bool complex = type.starts_with("C_");
  if (type.size() < 3 || !(complex || type.starts_with("R_"))) return 0;
  type.remove_prefix(2);
  // The bit width leads: 64F, 32F, 32I, 16BF, 16F, 8I, 8U, 8F_E4M3, 6F_E2M3, 4F_E2M1, 4I.
  int bits = 0;
  std::size_t i = 0;
  while (i < type.size() && type[i] >= '0' && type[i] <= '9') bits = bits * 10 + (type[i++] - '0');
  if (bits == 0 || i == type.size()) return 0;
  return (complex ? 2.0 : 1.0) * bits / 8.0;
}

double GemmCall::flops() const {
  const double real = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
  // A complex multiply-add is 4 real multiplies and 4 adds.
  return a_type.starts_with("C_") ? 4 * real : real;
}

double GemmCall::a_bytes() const { return static_cast<double>(m) * k * batch * element_bytes(a_type); }
double GemmCall::b_bytes() const { return static_cast<double>(k) * n * batch * element_bytes(b_type); }
double GemmCall::c_bytes() const {
  // Read only when beta is not zero; the API log does not say, so its calls count as beta = 0.
  return beta.value_or(0) != 0 ? static_cast<double>(m) * n * batch * element_bytes(c_type) : 0;
}
double GemmCall::d_bytes() const { return static_cast<double>(m) * n * batch * element_bytes(d_type); }
double GemmCall::bias_bytes() const {
  return epilogue.find("BIAS") != std::string::npos && epilogue.find("BGRAD") == std::string::npos
             ? static_cast<double>(m) * batch * element_bytes(d_type)
             : 0;
}
double GemmCall::min_bytes() const { return a_bytes() + b_bytes() + c_bytes() + d_bytes() + bias_bytes(); }

Result<GemmLog> parse_gemm_log(std::string_view text, const std::string& source) {
  GemmLog log;
  log.source = source;
  const bool has_api = text.find("I! cuBLAS") != std::string_view::npos;
  const bool has_lt = text.find("][cublasLt][") != std::string_view::npos;
  if (!has_api && !has_lt) {
    return make_error(ErrorCode::kBadInput, source + ": not a cuBLAS log (CUBLAS_LOGINFO_DBG=1) or cuBLASLt log "
                                                     "(CUBLASLT_LOG_LEVEL=2..5): no \"I! cuBLAS\" or \"[cublasLt]\" line");
  }
  std::vector<GemmCall> lt = has_lt ? parse_cublaslt_log(text, log.notes) : std::vector<GemmCall>{};
  std::vector<GemmCall> api = has_api ? parse_cublas_api_log(text, log.notes) : std::vector<GemmCall>{};
  if (!lt.empty() && !api.empty()) {
    // cuBLAS routes its GEMMs through cuBLASLt, which logs them again ([cublasLtTSTMatmul]):
    // one file holding both logs counts each call once, from cuBLASLt's lines.
    log.notes.push_back({"api_calls_logged_twice", NoteSeverity::kInfo,
                         std::to_string(api.size()) + " cuBLAS API log call(s) left out: the cuBLASLt lines of the "
                                                      "same file log cuBLAS's GEMMs too",
                         static_cast<std::int64_t>(api.size())});
    api.clear();
  }
  log.calls = lt.empty() ? std::move(api) : std::move(lt);
  if (log.calls.empty()) {
    return make_error(ErrorCode::kBadInput, source + ": a cuBLAS" + std::string(has_lt ? "Lt" : "") +
                                                " log without GEMM calls" +
                                                (has_lt ? " (cuBLASLt logs shapes at CUBLASLT_LOG_LEVEL 2 or more, or with mask bit 2)" : ""));
  }
  return log;
}

Result<GemmLog> read_gemm_log(const std::string& path) {
  auto text = read_text_input(path);
  if (!text) return std::unexpected(text.error());
  return parse_gemm_log(*text, path);
}

}  // namespace kernscope::readers::cublas_log
