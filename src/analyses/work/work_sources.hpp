// Kernel-work providers that read side files of the trace through kernscope's readers: Nsight
// Compute CSV exports (measured counters) and cuBLAS/cuBLASLt logs (the library's GEMM shapes).
// Rows of work_providers() (kernel_work_providers.cpp); kernel_work.hpp says how providers work.
#pragma once

#include "analyses/work/kernel_work.hpp"

namespace kernscope {

Result<void> fill_ncu_work(const WorkRequest& request, WorkTable& table);         // --ncu FILE
Result<void> fill_cublas_log_work(const WorkRequest& request, WorkTable& table);  // --cublas-log FILE

// A cuBLAS log's work per trace kernel row (what fill_cublas_log_work offers). The ncu provider
// takes FLOPs from it for kernels its export measured bytes of but holds no FLOP counter for.
struct LoggedGemmWork {
  std::map<RowIndex, KernelWork> by_row;
  std::size_t calls = 0;             // GEMM calls in the log
  std::vector<Note> notes;           // the log's and the join's
};
Result<LoggedGemmWork> cublas_log_work(const Trace& trace, const std::string& path);

}  // namespace kernscope
