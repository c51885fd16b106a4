// The sources of kernel work, most trusted first: for each kernel the first provider that offers
// its work wins (WorkTable::offer). Measured counters beat the library's own GEMM shapes, which
// beat PyTorch's shapes (the op around the launch, split over its kernels), which beat an
// analytic model. To add a source: one row here, its code in a file of its own (kernel_work.hpp).
#include "analyses/kernel_work.hpp"
#include "analyses/model_cost_report.hpp"
#include "analyses/shape_work.hpp"

namespace kernscope {

const std::vector<WorkProvider>& work_providers() {
  static const std::vector<WorkProvider> providers = {
      // ncu (measured DRAM bytes and FLOPs per kernel) goes here, first.
      // cublas-log (cuBLAS/cuBLASLt logs: GEMM shapes and types) goes here, second.
      {kSourceKinetoShapes, {}, fill_kineto_shape_work},
      {kSourceNvtxShapes, {}, fill_nvtx_shape_work},
      {kSourceModelConfig, model_option_specs(), fill_model_config_work},
  };
  return providers;
}

}  // namespace kernscope
