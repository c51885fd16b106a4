// The legacy cuBLAS API log (CUBLAS_LOGINFO_DBG=1). Each call is a block:
//   I! cuBLAS (v13.1.0) function cublasStatus_t cublasGemmEx(cublasHandle_t, ...) called:
//   i!  transa: type=cublasOperation_t; val=CUBLAS_OP_T(1)
//   i!  m: type=int; val=14336
//   ...
//   i!Process=568; Thread=...; GPU=0; Handle=...; StreamId=POINTER (IN HEX:0x(nil)) (defaultStream); MathMode=...
// GEMMs (cublas<t>gemm[_v2], cublasGemmEx, the batched and strided-batched forms, _64) and GEMVs
// (cublas<t>gemv, m x n matrix times a vector: 2·m·n FLOPs) are kept; other calls are skipped.
#include <map>

#include "base/text_pattern.hpp"
#include "readers/cublas_log/gemm_log.hpp"

namespace kernscope::readers::cublas_log {
namespace {

struct Block {
  std::string function;
  std::size_t line = 0;
  std::map<std::string, std::string> values;  // argument -> val=...
  std::string trailer, time;
};

// "CUBLAS_OP_T(1)" -> "CUBLAS_OP_T"; "CUDA_R_16BF(14)" -> "CUDA_R_16BF".
std::string enum_name(const std::string& value) {
  const std::size_t paren = value.find('(');
  return paren == std::string::npos ? value : value.substr(0, paren);
}

std::optional<std::int64_t> integer(const Block& b, const char* name) {
  const auto it = b.values.find(name);
  if (it == b.values.end()) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(it->second, &used);
    if (used != it->second.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

char op_of(const Block& b, const char* name) {
  const auto it = b.values.find(name);
  if (it == b.values.end()) return 'N';
  const std::string op = enum_name(it->second);
  if (op.ends_with("_T")) return 'T';
  if (op.ends_with("_C") || op.ends_with("_HERMITAN")) return 'C';
  return 'N';
}

std::string type_of(const Block& b, const char* name, const std::string& fallback) {
  const auto it = b.values.find(name);
  if (it == b.values.end()) return fallback;
  std::string t = enum_name(it->second);
  if (t.starts_with("CUDA_")) t = t.substr(5);
  return t;
}

// cublasSgemm -> R_32F, cublasZgemv -> C_64F: the letter after "cublas" in the typed routines.
std::string typed_routine_type(const std::string& function) {
  if (function.size() < 7) return {};
  switch (function[6]) {
    case 'S': return "R_32F";
    case 'D': return "R_64F";
    case 'H': return "R_16F";
    case 'C': return "C_32F";
    case 'Z': return "C_64F";
    default: return {};
  }
}

std::string pointer_hex(std::string text) {
  // "POINTER (IN HEX:0x0x7fea...)" or "POINTER (IN HEX:0x(nil))": the null stream is the legacy default.
  static const auto kHex = TextPattern::literal(R"(IN HEX:(?:0x)?(0x[0-9a-fA-F]+|\(nil\)))");
  const auto m = kHex.find(text);
  if (!m) return text;
  std::string hex(m->group(1));
  if (hex == "(nil)") return "0x0";
  for (char& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hex;
}

std::optional<GemmCall> call_of(const Block& b, std::vector<Note>& notes) {
  std::string lower = b.function;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool gemm = lower.find("gemm") != std::string::npos;
  const bool gemv = lower.find("gemv") != std::string::npos;
  if (!gemm && !gemv) return std::nullopt;
  if (lower.find("grouped") != std::string::npos) {
    notes.push_back({"grouped_gemm_left_out", NoteSeverity::kInfo,
                     b.function + " at line " + std::to_string(b.line) + " left out: grouped GEMMs log arrays of shapes"});
    return std::nullopt;
  }
  GemmCall call;
  call.log = LogKind::kCublasApi;
  call.function = b.function;
  call.line = b.line;
  call.time = b.time;
  const auto m = integer(b, "m"), n = integer(b, "n"), k = integer(b, "k");
  if (gemm && !(m && n && k)) {
    notes.push_back({"call_without_shape", NoteSeverity::kDataLoss, b.function + " at line " + std::to_string(b.line) + " left out: no m, n and k"});
    return std::nullopt;
  }
  if (gemv && !(m && n)) {
    notes.push_back({"call_without_shape", NoteSeverity::kDataLoss, b.function + " at line " + std::to_string(b.line) + " left out: no m and n"});
    return std::nullopt;
  }
  const std::string typed = typed_routine_type(b.function);
  if (gemm) {
    call.m = *m;
    call.n = *n;
    call.k = *k;
    call.transa = op_of(b, "transa");
    call.transb = op_of(b, "transb");
  } else {
    // y = op(A) x with A m x n: a GEMM of op(A) (rows x cols) by one column.
    call.transa = op_of(b, "trans");
    call.m = call.transa == 'N' ? *m : *n;
    call.k = call.transa == 'N' ? *n : *m;
    call.n = 1;
  }
  call.a_type = type_of(b, "Atype", typed);
  call.b_type = type_of(b, gemv ? "xtype" : "Btype", call.a_type);
  call.c_type = type_of(b, gemv ? "ytype" : "Ctype", call.a_type);
  call.d_type = call.c_type;
  if (call.a_type.empty()) {
    notes.push_back({"call_without_types", NoteSeverity::kDataLoss, b.function + " at line " + std::to_string(b.line) + " left out: no data types"});
    return std::nullopt;
  }
  std::string compute = type_of(b, "computeType", "");
  if (compute.starts_with("CUBLAS_")) compute = compute.substr(7);
  // Typed routines (cublasSgemm: R_32F) compute in their own type.
  if (compute.empty()) compute = "COMPUTE_" + call.a_type.substr(2);
  // FP32 routines run in TF32 on tensor cores when the handle's math mode allows it.
  if (compute == "COMPUTE_32F" && b.trailer.find("TF32_TENSOR_OP_MATH") != std::string::npos) compute = "COMPUTE_32F_FAST_TF32";
  call.compute_type = compute;
  call.lda = integer(b, "lda").value_or(0);
  call.ldb = integer(b, "ldb").value_or(0);
  call.ldc = integer(b, "ldc").value_or(0);
  call.batch = integer(b, "batchCount").value_or(1);
  static const auto kProcess = TextPattern::literal(R"(Process=(\d+))"), kStream = TextPattern::literal(R"(StreamId=([^;]*))");
  if (auto match = kProcess.find(b.trailer)) call.process_id = std::stoll(std::string(match->group(1)));
  const auto stream = kStream.find(b.trailer);
  call.stream = stream ? pointer_hex(std::string(stream->group(1))) : "0x0";
  return call;
}

}  // namespace

std::vector<GemmCall> parse_cublas_api_log(std::string_view text, std::vector<Note>& notes) {
  static const auto kStart = TextPattern::literal(R"(^I! cuBLAS.*function\s+\S+\s+(\w+)\()");
  static const auto kArgument = TextPattern::literal(R"(^i!\s+(\w+): type=[^;]*; val=(.*)$)");
  std::vector<GemmCall> calls;
  // The open block (GCC 12 warns falsely about a std::optional<Block> here).
  Block block;
  bool open = false;
  const auto close = [&] {
    if (!open) return;
    if (auto call = call_of(block, notes)) calls.push_back(std::move(*call));
    open = false;
  };
  std::size_t line_number = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with("I! ")) {
      close();
      if (auto m = kStart.find(line)) {
        block = Block{std::string(m->group(1)), line_number, {}, {}, {}};
        open = true;
      }
      continue;
    }
    if (!open) continue;
    if (line.starts_with("i!Process=") || line.starts_with("i! Process=")) {
      block.trailer = line;
    } else if (line.starts_with("i! Time: ")) {
      block.time = line.substr(9, line.find(' ', 9) - 9);
    } else if (auto m = kArgument.match_whole(line)) {
      block.values[std::string(m->group(1))] = std::string(m->group(2));
    }
  }
  close();
  return calls;
}

}  // namespace kernscope::readers::cublas_log
