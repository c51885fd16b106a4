// Rendering of rule findings (kernscope analyze).
#pragma once

#include "render/json_writer.hpp"

#include <string>
#include <vector>

#include "analyses/nsys/analyze.hpp"

namespace kernscope {

// nsys analyze's console text for one finding (without its "Processing [...]" line).
std::string render_finding_console(const Finding& finding, std::size_t row_limit);
// {"findings": [{"rule", "title", "severity", "count", "skipped", "evidence", "action", "rows"}, ...]}
std::string render_findings_json(const std::vector<Finding>& findings);
void write_findings_json(JsonWriter& json, const std::vector<Finding>& findings);

}  // namespace kernscope
