// The sources of kernel work, most trusted first: for each kernel the first provider that offers
// its work wins (WorkTable::offer). Measured counters beat the library's own GEMM shapes, which
// beat PyTorch's shapes (the op around the launch, split over its kernels), which beat an
// analytic model. To add a source: one row here, its code in a file of its own (kernel_work.hpp).
#include "analyses/work/kernel_work.hpp"
#include "analyses/work/model_cost_report.hpp"
#include "analyses/work/shape_work.hpp"
#include "analyses/work/work_sources.hpp"

namespace kernscope {

const std::vector<WorkProvider>& work_providers() {
  static const std::vector<WorkProvider> providers = {
      {kSourceNcu,
       {{"ncu", 0, OptionKind::kText, "",
         "Nsight Compute CSV (ncu --csv --page raw or details) of the same program: measured DRAM bytes and FLOPs per "
         "kernel, joined by name and launch order (the CSV also opens as a trace of its own)"}},
       fill_ncu_work},
      {kSourceCublasLog,
       {{"cublas-log", 0, OptionKind::kText, "",
         "cuBLAS (CUBLAS_LOGINFO_DBG=1) or cuBLASLt (CUBLASLT_LOG_LEVEL>=2) log of the same run: GEMM shapes, "
         "joined to the GEMM kernels by stream and order"}},
       fill_cublas_log_work},
      {kSourceKinetoShapes, {}, fill_kineto_shape_work},
      {kSourceNvtxShapes, {}, fill_nvtx_shape_work},
      {kSourceModelConfig, model_option_specs(), fill_model_config_work},
  };
  return providers;
}

}  // namespace kernscope
