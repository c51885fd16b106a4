// `kernscope roofline` (analyses/work/roofline.hpp): its JSON document and the text a user reads
// around the rows (the summary above, the chart and the notes below). The HTML page is
// html/roofline_page.
#pragma once

#include <string>

#include "analyses/work/roofline.hpp"
#include "kernscope/render.hpp"

namespace kernscope {

// {"summary": [lines], "rows": [the table's rows], "notes": [...]}.
std::string render_roofline_json(const RooflineResult& result, const Table& rows, const RenderOptions& options);
// The summary lines, the rows, the chart of the 8 largest, the notes.
std::string render_roofline_text(const RooflineResult& result, const Table& rows, const RenderOptions& options);

}  // namespace kernscope
