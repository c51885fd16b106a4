// `kernscope record --gemm-shapes`: the environment that makes cuBLAS and cuBLASLt log every GEMM
// call with its shapes into files beside the trace, for `kernscope roofline --cublas-log FILE`.
// cuBLASLt at level 2 (performance trace: one line per call that launches a kernel) also logs
// the GEMMs legacy cuBLAS routes through it (cuBLAS 12 and later); the API log covers older ones.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kernscope::readers::cublas_log {

struct GemmShapeLogs {
  std::vector<std::pair<std::string, std::string>> env;  // variables to set in the program
  std::string cublaslt_log;  // the file cuBLASLt writes (%i: its process id, expanded by cuBLASLt)
  std::string cublas_log;    // the file cuBLAS's API log goes to
};

// `trace_output` is record's -o ("run.sqlite", "kernscope-%p.sqlite"): the logs go beside it,
// named after it without its extension; the trace pattern's %p becomes cuBLASLt's %i.
GemmShapeLogs gemm_shape_logs(const std::string& trace_output);

}  // namespace kernscope::readers::cublas_log
