// How PyTorch's profiler (Kineto) spells CUDA's copy kinds, memory kinds and synchronization
// types, mapped to Nsight Systems' numbering (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND,
// ENUM_CUPTI_SYNC_TYPE). One table serves both directions: the Kineto reader parses these names,
// the timeline export writes them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace kernscope::kineto_names {

inline constexpr std::int32_t kMemoryKindUnknown = 7;

// Copy kinds: "HtoD" <-> 1 ... "PtoP" <-> 10; 0 and anything else is "Unknown".
std::string_view copy_code(std::int32_t kind);
// The copy kind whose code appears in a name like "Memcpy HtoD (Pageable -> Device)"; 0 when none.
std::int32_t copy_kind_in(std::string_view name);

// Memory kinds: "Pageable" <-> 0 ... "Managed Static" <-> 6, "Unknown" <-> 7 (also for "Host").
std::string_view memory_label(std::int32_t kind);
std::int32_t memory_kind(std::string_view label);

// Synchronization types: "Event Sync" <-> 1, "Stream Wait Event" <-> 2, "Stream Sync" <-> 3,
// "Context Sync" <-> 4; 0 is "Synchronization" when written, and any other name reads as 0.
std::string_view sync_name(std::int32_t type);
std::int32_t sync_type(std::string_view name);

// nsys's label tables, for traces that do not carry them.
const std::map<std::int32_t, std::string>& nsys_memcpy_kind_labels();
const std::map<std::int32_t, std::string>& nsys_memory_kind_labels();

}  // namespace kernscope::kineto_names
