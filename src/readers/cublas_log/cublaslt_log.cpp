// cuBLASLt's log (CUBLASLT_LOG_LEVEL 2 and up). The performance-trace lines carry the shapes:
//   [2026-11-22 02:21:37][cublasLt][568][Trace][cublasLtMatmul] A=0X... Adesc=[type=R_16BF rows=4096
//   cols=14336 ld=4096] B=... Bdesc=[...] C=... Cdesc=[...] D=... Ddesc=[...] computeDesc=[computeType=
//   COMPUTE_32F scaleType=R_32F transa=OP_T epilogue=EPILOGUE_BIAS ...] algo=[...] ... beta=0 ... stream=0X0
// One line per call that launches a kernel (cuBLAS's own GEMMs appear as cublasLtTSTMatmul and
// the like). Level 5's API lines show only descriptor pointers and its heuristic queries are not
// calls: both are skipped. transa/transb are printed only when not OP_N.
#include <map>

#include "base/text_pattern.hpp"
#include "readers/cublas_log/gemm_log.hpp"

namespace kernscope::readers::cublas_log {
namespace {

using Fields = std::map<std::string, std::string>;

// "key=value key=[nested fields] ..." -> fields; bracketed values keep their inside.
Fields fields_of(std::string_view text) {
  Fields out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    const std::size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos) break;
    const std::string key(text.substr(pos, eq - pos));
    std::size_t value_end = eq + 1;
    std::string value;
    if (value_end < text.size() && text[value_end] == '[') {
      int depth = 0;
      std::size_t i = value_end;
      for (; i < text.size(); ++i) {
        if (text[i] == '[') ++depth;
        else if (text[i] == ']' && --depth == 0) break;
      }
      value = std::string(text.substr(value_end + 1, i - value_end - 1));
      value_end = i + 1;
    } else {
      const std::size_t space = text.find(' ', value_end);
      value_end = space == std::string_view::npos ? text.size() : space;
      value = std::string(text.substr(eq + 1, value_end - eq - 1));
    }
    // Keys hold no spaces: text before the last space of a key is a stray word.
    out[key.substr(key.find_last_of(' ') == std::string::npos ? 0 : key.find_last_of(' ') + 1)] = value;
    pos = value_end;
  }
  return out;
}

std::int64_t integer(const Fields& f, const char* key, std::int64_t fallback = 0) {
  const auto it = f.find(key);
  if (it == f.end()) return fallback;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return fallback;
  }
}

std::string text(const Fields& f, const char* key) {
  const auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

char op_of(const std::string& value) {
  if (value == "OP_T") return 'T';
  if (value == "OP_C") return 'C';
  return 'N';
}

}  // namespace

std::vector<GemmCall> parse_cublaslt_log(std::string_view log_text, std::vector<Note>& notes) {
  static const auto kLine = TextPattern::literal(R"(^\[([^\]]*)\]\[cublasLt\]\[(\d+)\]\[(\w+)\]\[(\w+)\]\s*(.*)$)");
  static const auto kMatmul = TextPattern::literal(R"(^cublasLt\w*Matmul$)");
  std::vector<GemmCall> calls;
  std::size_t line_number = 0, pos = 0, pointer_only = 0;
  while (pos < log_text.size()) {
    const std::size_t end = std::min(log_text.find('\n', pos), log_text.size());
    std::string line(log_text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto m = kLine.match_whole(line);
    if (!m) continue;
    const std::string level(m->group(3)), function(m->group(4));
    if (!kMatmul.matches(function)) continue;
    if (level != "Trace") {
      if (level == "Api") ++pointer_only;
      continue;
    }
    const Fields f = fields_of(std::string(m->group(5)));
    const Fields a = fields_of(text(f, "Adesc")), b = fields_of(text(f, "Bdesc")), c = fields_of(text(f, "Cdesc")),
                 d = fields_of(text(f, "Ddesc")), compute = fields_of(text(f, "computeDesc"));
    GemmCall call;
    call.log = LogKind::kCublasLt;
    call.function = function;
    call.line = line_number;
    call.time = std::string(m->group(1));
    call.process_id = std::stoll(std::string(m->group(2)));
    call.transa = op_of(text(compute, "transa"));
    call.transb = op_of(text(compute, "transb"));
    // Column-major: op(A) is m x k, op(B) k x n, D m x n.
    call.m = integer(d, "rows");
    call.n = integer(d, "cols");
    call.k = call.transa == 'N' ? integer(a, "cols") : integer(a, "rows");
    call.batch = integer(d, "batchCount", integer(a, "batchCount", 1));
    call.a_type = text(a, "type");
    call.b_type = text(b, "type");
    call.c_type = text(c, "type");
    call.d_type = text(d, "type").empty() ? call.c_type : text(d, "type");
    call.lda = integer(a, "ld");
    call.ldb = integer(b, "ld");
    call.ldc = integer(c, "ld");
    call.compute_type = text(compute, "computeType");
    call.epilogue = text(compute, "epilogue");
    call.algo = text(f, "algo");
    if (const std::string beta = text(f, "beta"); !beta.empty()) {
      try {
        call.beta = std::stod(beta);
      } catch (...) {
      }
    }
    std::string stream = text(f, "stream");
    for (char& ch : stream) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    call.stream = stream.empty() ? "0x0" : stream;
    const std::int64_t k_of_b = call.transb == 'N' ? integer(b, "rows") : integer(b, "cols");
    if (call.m <= 0 || call.n <= 0 || call.k <= 0 || call.a_type.empty()) {
      notes.push_back({"call_without_shape", NoteSeverity::kDataLoss,
                       function + " at line " + std::to_string(line_number) + " left out: its descriptors give no shape"});
      continue;
    }
    if (k_of_b != call.k) {
      notes.push_back({"operand_shapes_disagree", NoteSeverity::kInfo,
                       function + " at line " + std::to_string(line_number) + ": op(B) has " + std::to_string(k_of_b) +
                           " rows where op(A) has " + std::to_string(call.k) + " columns (k taken from A)"});
    }
    calls.push_back(std::move(call));
  }
  if (calls.empty() && pointer_only > 0) {
    notes.push_back({"calls_logged_without_shapes", NoteSeverity::kInfo,
                     std::to_string(pointer_only) + " cuBLASLt matmul call(s) logged without shapes (API lines only: "
                                                    "log at CUBLASLT_LOG_LEVEL 2 or more, or with CUBLASLT_LOG_MASK bit 2)",
                     static_cast<std::int64_t>(pointer_only)});
  }
  return calls;
}

}  // namespace kernscope::readers::cublas_log
