// Kernel work from PyTorch operator shapes: two providers of kernel_work.hpp.
//  kineto-shapes: PyTorch-profiler traces with record_shapes (Trace::op_shapes);
//  nvtx-shapes:   nsys traces of programs run under torch.autograd.profiler.emit_nvtx(record_shapes=True),
//                 whose NVTX ranges read "aten::mm, seq = 3, op_id = 7, sizes = [[8, 4096], [4096, 14336]]".
// Each kernel is joined to the nearest operator around its launch that kernscope has a formula
// for (the launching API call inside the operator's range on the same thread; Kineto's External id
// first where it names such an operator). An operator with several kernels gives its work to the
// longest (the GEMM or attention kernel); the others (a fill, a split-K reduction) are covered with
// no work of their own, so they show as bound by latency.
#pragma once

#include "analyses/work/kernel_work.hpp"

namespace kernscope {

Result<void> fill_kineto_shape_work(const WorkRequest& request, WorkTable& table);
Result<void> fill_nvtx_shape_work(const WorkRequest& request, WorkTable& table);

}  // namespace kernscope
