// Adds the native sampler's stacks to a trace file, in the tables the Python sampler and Nsight
// Systems' --sample=cpu use (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS with StringIds, ThreadNames,
// KERNSCOPE_HOST_INFO), so `kernscope host`, `report` and the flame graphs read them unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernscope/error.hpp"
#include "tracer/native_sampler.hpp"
#include "tracer/native_symbols.hpp"

namespace kernscope::tracer {

// What KERNSCOPE_HOST_INFO's native_frames row says for a trace of native stacks.
extern const char* const kNativeFramesNote;

// Appends in one transaction to `path` (created with the tables it needs when absent; the tracer's
// finished file otherwise). Frames are named now, in this process, through `symbols`. `info`: rows
// for KERNSCOPE_HOST_INFO (the sampler's, and any the caller adds).
Result<void> append_native_samples(const std::string& path, std::uint32_t pid, const std::string& process_name,
                                   const NativeSamples& samples, NativeSymbolizer& symbols,
                                   const std::vector<std::pair<std::string, std::string>>& info);

}  // namespace kernscope::tracer
