// `kernscope roofline` (analyses/work/roofline.hpp): its JSON document and the text a user reads
// around the rows (the summary above, the chart and the notes below). The HTML page is
// html/roofline_page.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyses/work/roofline.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/render.hpp"

namespace kernscope {

// One headline figure in words ("decode MBU 41.2 %: ...").
std::string roofline_headline_line(const RooflineHeadline& headline, double latency_floor_ns);
// "work known for 61.0 % of kernel time (...)": the kernel time whose work a source gave, by source.
std::string roofline_coverage_line(std::int64_t kernel_ns, std::int64_t covered_ns, const std::map<std::string, std::int64_t>& by_source,
                                   const std::string& step_work_source);
// Coverage, peaks and headline lines (the text above the table).
std::vector<std::string> roofline_summary_lines(const RooflineResult& result);
// What the sources said and what is missing, the withheld headlines among them (kind headline_withheld).
std::vector<Note> roofline_notes(const RooflineResult& result);
// A log-log roofline in text: the two roofs and the largest rows as letters (legend below).
std::string roofline_text_chart(const RooflineResult& result, std::size_t points);

// {"summary": [lines], "rows": [the table's rows], "notes": [{"kind", "severity", "count", "text"}]}.
std::string render_roofline_json(const RooflineResult& result, const Table& rows, const RenderOptions& options);
// The summary lines, the rows, the chart of the 8 largest, the notes.
std::string render_roofline_text(const RooflineResult& result, const Table& rows, const RenderOptions& options);

}  // namespace kernscope
