// The collective arguments a PyTorch-profiler trace carries that the trace model does not keep:
// record_param_comms's collective name, process group, sequence number, message sizes and dtype,
// copied by newer PyTorch onto the NCCL kernels themselves. One streaming pass over the JSON that
// parses only the events whose text names such arguments.
#pragma once

#include <string>

#include "ranks/collectives.hpp"
#include "kernscope/error.hpp"

namespace kernscope::ranks {

// Times are on the same scale as the Kineto reader's (microseconds to exact nanoseconds, plus
// baseTimeNanoseconds where the trace has it).
Result<CommArgsLookup> read_kineto_comm_args(const std::string& path);

}  // namespace kernscope::ranks
