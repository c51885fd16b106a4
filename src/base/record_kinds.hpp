// What kernscope's tracer can record (`record --record KINDS`) and what it records by default: one
// home for the tracer, which enables them, and the analyses of its traces, which read back which
// kinds a trace holds (KERNSCOPE_TRACER_INFO recorded_kinds) to look up the tracer's cost.
#pragma once
#include <array>
#include <string_view>

namespace kernscope {

// CUPTI activity kinds by name, in the order the tracer enables them and writes them in
// recorded_kinds.
inline constexpr std::array<std::string_view, 8> kRecordKinds = {"kernel", "memcpy", "memset", "runtime",
                                                                 "driver", "sync",   "nvtx",   "overhead"};

// Every kind but sync. CUPTI's SYNCHRONIZATION kind was the one addition that moved the eager Llama's
// whole-program time per token (H200, CUDA 13.0 driver 580, 2 interleaved rounds: kernel+runtime+driver
// 11.44 / 11.81 ms, the same plus sync 13.31 / 17.00 ms; memcpy+memset, nvtx and overhead each within
// noise; bench/RESULTS.md). The sync calls themselves are still recorded as runtime/driver API calls
// (cudaStreamSynchronize, cudaEventSynchronize, ...), which is what the analyses read; only the
// SYNCHRONIZATION table (its stream and event ids) needs `--record ...,sync` or `--record all`.
inline constexpr std::string_view kDefaultRecordKinds = "kernel,memcpy,memset,runtime,driver,nvtx,overhead";
inline constexpr std::string_view kAllRecordKinds = "kernel,memcpy,memset,runtime,driver,sync,nvtx,overhead";

// Whether `kind` is one of the default kinds.
constexpr bool default_record_kind(std::string_view kind) { return kind != "sync"; }

}  // namespace kernscope
