// What tracing cost a program (analyses/steps/tracer_cost.hpp), in words and as JSON: the one place
// its sentences are made (`info`, `report` and `steps` print them).
#pragma once

#include <string>
#include <vector>

#include "analyses/steps/tracer_cost.hpp"
#include "render/json_writer.hpp"

namespace kernscope {

// The estimate (or why there is none), then what was measured; empty for traces of other tools.
std::vector<std::string> tracer_cost_sentences(const TracerCostEstimate& e);

// The figures as one JSON object (the sentences beside them), or null for traces of other tools.
void write_tracer_cost_json(JsonWriter& json, const TracerCostEstimate& e);

}  // namespace kernscope
