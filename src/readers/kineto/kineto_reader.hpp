// Reads PyTorch-profiler (Kineto) and Chrome JSON traces into the trace model: kernels, copies,
// memsets, CUDA runtime/driver calls, synchronizations, and the three kinds of framework ranges
// (user annotations, cpu_op, gpu_user_annotation) as NVTX-like ranges, so every report runs on
// them unchanged. Streams the file (memory stays far below its size) and parses timestamps
// exactly into nanoseconds.
#pragma once

#include <string>

#include "kernscope/error.hpp"
#include "kernscope/open.hpp"
#include "kernscope/trace.hpp"
#include "readers/kineto/byte_source.hpp"

namespace kernscope::kineto {

// `label` names the input in messages and in Trace::source.path.
Result<Trace> read_kineto(ByteSource& source, const std::string& label, const OpenOptions& options);

}  // namespace kernscope::kineto
