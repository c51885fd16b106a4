#include "model/kineto_names.hpp"

#include <array>

namespace kernscope::kineto_names {
namespace {

// CUPTI's copy kinds 0-10 as Kineto spells them; 11-13 are nsys's unified-memory transfers, which
// Kineto never writes: kernscope's export spells them with a U so they read back as the same kind.
constexpr std::array<std::string_view, 14> kCopyCodes = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH",  "AtoA",  "AtoD",
                                                         "DtoA",    "DtoD", "HtoH", "PtoP", "UHtoD", "UDtoH", "UDtoD"};
constexpr std::array<std::string_view, 8> kMemoryLabels = {"Pageable", "Pinned",         "Device",        "Array",
                                                           "Managed",  "Device Static", "Managed Static", "Unknown"};
constexpr std::array<std::string_view, 5> kSyncNames = {"Synchronization", "Event Sync", "Stream Wait Event",
                                                        "Stream Sync", "Context Sync"};

}  // namespace

std::string_view copy_code(std::int32_t kind) {
  return kind >= 0 && kind < static_cast<std::int32_t>(kCopyCodes.size()) ? kCopyCodes[kind] : kCopyCodes[0];
}

std::int32_t copy_kind_in(std::string_view name) {
  // Longest codes first: "UHtoD" holds "HtoD".
  for (std::size_t kind = kCopyCodes.size() - 1; kind >= 1; --kind) {
    if (name.find(kCopyCodes[kind]) != std::string_view::npos) return static_cast<std::int32_t>(kind);
  }
  return 0;
}

std::string_view memory_label(std::int32_t kind) {
  return kind >= 0 && kind < static_cast<std::int32_t>(kMemoryLabels.size()) ? kMemoryLabels[kind]
                                                                            : kMemoryLabels[kMemoryKindUnknown];
}

std::int32_t memory_kind(std::string_view label) {
  for (std::size_t kind = 0; kind < kMemoryLabels.size(); ++kind) {
    if (kMemoryLabels[kind] == label) return static_cast<std::int32_t>(kind);
  }
  return kMemoryKindUnknown;  // "Host" (ROCm) and anything else
}

std::string_view sync_name(std::int32_t type) {
  return type > 0 && type < static_cast<std::int32_t>(kSyncNames.size()) ? kSyncNames[type] : kSyncNames[0];
}

std::int32_t sync_type(std::string_view name) {
  for (std::size_t type = 1; type < kSyncNames.size(); ++type) {
    if (kSyncNames[type] == name) return static_cast<std::int32_t>(type);
  }
  return 0;
}

const std::map<std::int32_t, std::string>& nsys_memcpy_kind_labels() {
  static const std::map<std::int32_t, std::string> labels = {
      {0, "Unknown"},         {1, "Host-to-Device"},          {2, "Device-to-Host"},
      {3, "Host-to-Array"},   {4, "Array-to-Host"},           {5, "Array-to-Array"},
      {6, "Array-to-Device"}, {7, "Device-to-Array"},         {8, "Device-to-Device"},
      {9, "Host-to-Host"},    {10, "Peer-to-Peer"},           {11, "Unified Host-to-Device"},
      {12, "Unified Device-to-Host"}, {13, "Unified Device-to-Device"}};
  return labels;
}

const std::map<std::int32_t, std::string>& nsys_memory_kind_labels() {
  static const std::map<std::int32_t, std::string> labels = [] {
    std::map<std::int32_t, std::string> m;
    for (std::size_t kind = 0; kind < kMemoryLabels.size(); ++kind) m[static_cast<std::int32_t>(kind)] = kMemoryLabels[kind];
    return m;
  }();
  return labels;
}

}  // namespace kernscope::kineto_names
