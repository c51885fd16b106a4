// Findings as text: nsys analyze's console layout (wrapped advice, the evidence table, the row
// limit note) and kernscope's JSON interface {"findings": [...]}.
#include <sstream>

#include "kernscope/render.hpp"
#include "render/render_findings.hpp"
#include "render/json_writer.hpp"

namespace kernscope {
namespace {

// nsys's text wrapping, per line of the text: words kept whole, a line's leading indentation kept
// on its first output line only, at most 79 characters per line not counting that indentation
// (the golden outputs wrap "...all issued CUDA" at 80 characters yet keep "   2. Add NVTX ...
// the gaps." whole at 80 with its 3-space indent).
std::string wrap80(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool first_line = true;
  while (std::getline(lines, line)) {
    if (!first_line) out += '\n';
    first_line = false;
    const auto begin = line.find_first_not_of(' ');
    if (begin == std::string::npos) continue;
    std::string current = line.substr(0, begin);
    std::size_t indent = begin;
    bool empty = true;
    std::istringstream words(line.substr(begin));
    std::string word;
    while (words >> word) {
      if (!empty && current.size() - indent + 1 + word.size() >= 80) {
        out += current + '\n';
        current = word;
        indent = 0;
        continue;
      }
      current += (empty ? "" : " ") + word;
      empty = false;
    }
    out += current;
  }
  return out;
}

}  // namespace

std::string render_finding_console(const Finding& f, std::size_t row_limit) {
  if (f.skipped) return "SKIPPED: " + f.skip_reason + "\n";
  std::string out = "\n ** " + f.title + " (" + f.rule + "):\n\n";
  if (f.count == 0) return out + wrap80(f.no_result) + "\n\n";
  out += wrap80(f.advice) + "\n\n";
  std::ostringstream table;
  RenderOptions options{Format::kTable, TimeUnit::kNs};
  options.console_title = false;
  render(table, f.rows, options);
  out += table.str() + "\n";
  if (f.rows.rows.size() >= row_limit) {
    out += "Only the top " + std::to_string(row_limit) + " results are displayed. More data may be available.\n\n\n";
  }
  return out;
}

void write_findings_json(JsonWriter& json, const std::vector<Finding>& findings) {
  json.begin_object().key("findings").begin_array();
  for (const auto& f : findings) {
    json.begin_object()
        .member("rule", f.rule)
        .member("title", f.title)
        .member("severity", f.severity)
        .member("count", f.count)
        .member("skipped", f.skipped)
        .member("evidence", f.skipped ? f.skip_reason : f.evidence)
        .member("action", f.action)
        .key("rows");
    json.rows(f.rows, RenderOptions{Format::kJson, TimeUnit::kNs});
    json.end_object();
  }
  json.end_array().end_object();
}

std::string render_findings_json(const std::vector<Finding>& findings) {
  JsonWriter json;
  write_findings_json(json, findings);
  return json.finish();
}

}  // namespace kernscope
