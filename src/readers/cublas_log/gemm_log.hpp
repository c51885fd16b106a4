// GEMM calls from cuBLAS's logs: the legacy API log (CUBLAS_LOGINFO_DBG=1: one block per call,
// "I! ... function cublasGemmEx(...) called:" then "i!  m: type=int; val=14336" per argument) and
// cuBLASLt's (CUBLASLT_LOG_LEVEL=2..5: one "[Trace][cublasLtMatmul]" line per call that launches a
// kernel, with the matrix descriptors). Each call gives m, n, k, batch, transposes, types, compute
// type and leading dimensions; FLOPs = 2·m·n·k·batch (complex: 8·m·n·k·batch) and the least bytes
// the call can move (every operand read once, the result written once).
// Shapes in cuBLASLt are column-major: m = D.rows, n = D.cols, k = the columns of op(A).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"

namespace kernscope::readers::cublas_log {

enum class LogKind { kCublasApi, kCublasLt };

struct GemmCall {
  LogKind log = LogKind::kCublasLt;
  std::string function;  // cublasGemmEx, cublasSgemm_v2, cublasLtMatmul, cublasLtTSTMatmul, cublasSgemv_v2, ...
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  char transa = 'N', transb = 'N';   // N, T or C
  std::string a_type, b_type, c_type, d_type;  // cudaDataType without "CUDA_": R_16BF, R_32F, R_8F_E4M3, C_32F, ...
  std::string compute_type;          // COMPUTE_32F, COMPUTE_32F_FAST_TF32, ... (without "CUBLAS_")
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::string epilogue;              // cuBLASLt's, e.g. EPILOGUE_BIAS; empty when none
  std::optional<double> beta;        // cuBLASLt prints it; the API log gives only a pointer
  std::string stream;                // "0x0" for the default (legacy) stream, else the handle in hex
  std::int64_t process_id = 0;
  std::string time;                  // as the log prints it
  std::string algo;                  // cuBLASLt's algo=[...] (tile, stages, cluster shape)
  std::size_t line = 0;              // 1-based line of the call in the log

  double flops() const;
  // Least bytes: A and B read once, D written once, C read when beta != 0, a bias vector read.
  double a_bytes() const;
  double b_bytes() const;
  double c_bytes() const;
  double d_bytes() const;
  double bias_bytes() const;
  double min_bytes() const;
  bool is_gemv() const { return function.find("gemv") != std::string::npos; }
};

struct GemmLog {
  std::string source;
  std::vector<GemmCall> calls;     // in log order
  std::vector<Note> notes;         // what was left out and why
};

// Bytes per element of a cudaDataType name (R_16BF -> 2, R_4F_E2M1 -> 0.5, C_32F -> 8); 0 unknown.
double element_bytes(std::string_view type);

// kBadInput when the text is neither log, or holds no GEMM call.
Result<GemmLog> parse_gemm_log(std::string_view text, const std::string& source);
Result<GemmLog> read_gemm_log(const std::string& path);

// The two parsers (gemm_log.cpp chooses).
std::vector<GemmCall> parse_cublas_api_log(std::string_view text, std::vector<Note>& notes);
std::vector<GemmCall> parse_cublaslt_log(std::string_view text, std::vector<Note>& notes);

}  // namespace kernscope::readers::cublas_log
