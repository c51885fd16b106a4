#include "render/roofline_render.hpp"

#include <sstream>

#include "render/json_writer.hpp"

namespace kernscope {

std::string render_roofline_json(const RooflineResult& result, const Table& rows, const RenderOptions& options) {
  JsonWriter json(0);
  json.begin_object().key("summary").begin_array();
  for (const auto& line : roofline_summary(result)) json.value(line);
  json.end_array().key("rows").raw(table_json(rows, options)).key("notes").begin_array();
  for (const auto& note : result.notes) json.value(note);
  json.end_array().end_object();
  return json.finish();
}

std::string render_roofline_text(const RooflineResult& result, const Table& rows, const RenderOptions& options) {
  std::ostringstream text;
  for (const auto& line : roofline_summary(result)) text << line << '\n';
  text << '\n';
  render(text, rows, options);
  const std::string chart = roofline_chart(result, 8);
  if (!chart.empty()) text << '\n' << chart;
  for (const auto& note : result.notes) text << "note: " << note << '\n';
  return text.str();
}

}  // namespace kernscope
