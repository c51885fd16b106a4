#include "readers/cublas_log/gemm_shapes_env.hpp"

namespace kernscope::readers::cublas_log {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) text.replace(pos, from.size(), to);
  return text;
}

}  // namespace

GemmShapeLogs gemm_shape_logs(const std::string& trace_output) {
  std::string base = trace_output;
  for (const std::string ext : {".sqlite.gz", ".sqlite.xz", ".sqlite", ".nsys-rep", ".json.gz", ".json.xz", ".json"}) {
    if (base.size() > ext.size() && base.ends_with(ext)) {
      base.resize(base.size() - ext.size());
      break;
    }
  }
  GemmShapeLogs logs;
  logs.cublaslt_log = replace_all(base, "%p", "%i") + ".cublaslt.log";
  // cuBLAS's API log takes a plain file name: processes of one run share it.
  logs.cublas_log = replace_all(base, "%p", "all") + ".cublas.log";
  logs.env = {{"CUBLASLT_LOG_LEVEL", "2"},
              {"CUBLASLT_LOG_FILE", logs.cublaslt_log},
              {"CUBLAS_LOGINFO_DBG", "1"},
              {"CUBLAS_LOGDEST_DBG", logs.cublas_log}};
  return logs;
}

}  // namespace kernscope::readers::cublas_log
