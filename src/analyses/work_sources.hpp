// Kernel-work providers that read side files of the trace through kernscope's readers: Nsight
// Compute CSV exports (measured counters) and cuBLAS/cuBLASLt logs (the library's GEMM shapes).
// Rows of work_providers() (kernel_work_providers.cpp); kernel_work.hpp says how providers work.
#pragma once

#include "analyses/kernel_work.hpp"

namespace kernscope {

Result<void> fill_ncu_work(const WorkRequest& request, WorkTable& table);         // --ncu FILE
Result<void> fill_cublas_log_work(const WorkRequest& request, WorkTable& table);  // --cublas-log FILE

}  // namespace kernscope
