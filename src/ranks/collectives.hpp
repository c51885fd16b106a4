// Collectives as one rank ran them: what kind (from NCCL's kernel name or the framework's
// collective name), on which communicator, which one in its sequence, how many bytes, and when its
// GPU kernel started (the rank's arrival) and ended. The cross-rank analysis (ranks_skew) matches
// these across ranks; this file only knows one rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernscope/time_units.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::ranks {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv, kOther };

std::string_view kind_name(CollectiveKind kind);  // "all_reduce", "all_gather", ...
// NCCL's kernel operation ("AllReduce", "ReduceScatter", "SendRecv", ...).
CollectiveKind kind_from_nccl_operation(std::string_view operation);
// A framework's collective name: PyTorch's "allreduce", "all_reduce", "_allgather_base",
// "reduce_scatter_tensor_coalesced", "all_to_all", "alltoall_base", "send", "recv", nccl:* annotations.
CollectiveKind kind_from_collective_name(std::string_view name);

// NCCL's bus-bandwidth factor (nccl-tests doc/PERFORMANCE.md): all-reduce 2(n-1)/n,
// all-gather, reduce-scatter and all-to-all (n-1)/n, broadcast, reduce and send/receive 1.
double bus_bandwidth_factor(CollectiveKind kind, std::int64_t ranks);

// Bytes per element of a data type as traces spell it: PyTorch's "Float", "BFloat16", "Half",
// "Long"; NCCL kernel names' "f32", "bf16", "float", "int8_t"... 0 when unknown.
int dtype_bytes(std::string_view dtype);

// What a trace says about one collective call besides its kernel (Kineto's record_param_comms
// arguments, copied onto NCCL kernels by newer PyTorch).
struct CommArgs {
  std::string collective;   // "allreduce", "all_gather", ...
  std::string group;        // process group name ("0"), empty when unknown
  std::string group_ranks;  // "[0, 1]" as written
  std::int64_t group_size = 0;
  std::int64_t in_elements = -1, out_elements = -1;
  std::string dtype;        // "Float"
  std::int64_t seq = -1;    // the process group's sequence number, -1 when not recorded
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kOther;
  std::string kernel;              // the NCCL kernel's name
  std::string algorithm, protocol;  // from the kernel name (RING, LL...), empty when not in it
  std::string dtype;
  std::string group;                // communicator: process group, or "stream k" (k-th NCCL stream used)
  std::int64_t seq = -1;            // from the trace; -1: matched by `index`
  std::int64_t index = 0;           // position within `group`, in start order
  std::int64_t bytes = -1;          // message size (the larger of input and output), -1 unknown
  std::int64_t group_size = 0;      // ranks in the communicator where the trace says, else 0
  TimeNs start_ns = 0, end_ns = 0;  // the kernel: arrival and end, on this rank's clock
  std::uint32_t device = 0, stream = 0;
  std::int64_t step = -1;           // N of the ProfilerStep#N range its launch (else its start) falls in, -1 none
  TimeNs launch_ns = kNoTime;       // its launching call's start, where the trace has it
  std::int64_t window = -1;         // index of the rank's own step (ranks_steps.hpp) it was launched in, -1 none
  std::int64_t layer = -1;          // its position among the rank's collectives of that step (0 = first)
};

// Where a rank's collectives were found and how they are named.
struct RankCollectives {
  std::vector<Collective> items;  // start order
  std::string identity;           // how `group`/`seq` were obtained, said to the user
  std::int64_t with_args = 0;     // collectives whose sizes and group came from the trace's arguments
  std::int64_t comm_ns = 0;       // NCCL kernel time, union per device
  std::int64_t overlap_ns = 0;    // of that, time when a non-NCCL kernel ran on the same device
  std::int64_t compute_ns = 0;    // non-NCCL kernel time, union per device
};

// Arguments by the kernel they belong to (Kineto: kernels' own args, or the record_param_comms /
// nccl:* operation that launched them).
struct CommArgsLookup {
  // Kernel correlation id -> arguments copied onto the kernel.
  std::vector<std::pair<std::uint32_t, CommArgs>> by_correlation;  // sorted by correlation
  // CPU operations with arguments, start order: a kernel whose launch lies inside one gets its args.
  struct Operation {
    TimeNs start_ns = 0, end_ns = 0;
    CommArgs args;
  };
  std::vector<Operation> operations;
  bool empty() const { return by_correlation.empty() && operations.empty(); }
};

// The NCCL kernels of `trace` (of process `global_pid` only when it is not -1) as collectives.
RankCollectives collectives_of(const Trace& trace, std::int64_t global_pid, const CommArgsLookup* args);

bool is_nccl_kernel(std::string_view name);
// Kernel `i`'s name where it is an NCCL kernel (its demangled name, else its short name where the
// trace was read with name variants: OpenOptions::kernel_name_variants), else empty.
std::string_view nccl_kernel_name(const Trace& trace, RowIndex i);

// Time intervals [start, end) as the disjoint, sorted intervals of their union.
std::vector<std::pair<TimeNs, TimeNs>> merged_intervals(std::vector<std::pair<TimeNs, TimeNs>> intervals);

}  // namespace kernscope::ranks
