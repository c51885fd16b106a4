// The documents kernscope prints (not nsys's tables): the trace overview (`info`) and the
// diagnosis (`report`), each as text for people and as JSON for scripts (docs/interfaces.md).
#pragma once

#include <string>

#include "analyses/diagnosis/diagnosis.hpp"
#include "analyses/overview.hpp"
#include "render/json_writer.hpp"

namespace kernscope {

// Lists processes and threads with GPU or CUDA activity and the top NVTX ranges; `all`: everything.
std::string render_overview_text(const TraceOverview& overview, bool all = false);
std::string render_overview_json(const TraceOverview& overview);
void write_overview_json(JsonWriter& json, const TraceOverview& overview);

std::string render_diagnosis_text(const Diagnosis& diagnosis);
std::string render_diagnosis_json(const Diagnosis& diagnosis);
void write_diagnosis_json(JsonWriter& json, const Diagnosis& diagnosis);

}  // namespace kernscope
