#include "render/html/table.hpp"

#include "render/html/html_text.hpp"

namespace kernscope::html {

TableCell text_cell(std::string text) { return {std::move(text), std::nullopt, ""}; }
TableCell name_cell(std::string name) { return {std::move(name), std::nullopt, "name"}; }
TableCell number_cell(double value, std::string text) { return {std::move(text), value, ""}; }
TableCell duration_cell(double ns) { return {duration(ns), ns, ""}; }

std::string SortableTable::finish() const {
  std::string out = "<table class=\"sortable\" id=\"" + escape(id_) + "\"><thead><tr>";
  for (const auto& c : columns_) {
    out += "<th data-type=\"" + std::string(c.numeric ? "num" : "text") + "\" title=\"sort\">" + escape(c.header) + "</th>";
  }
  out += "</tr></thead><tbody>";
  for (const auto& row : rows_) {
    out += "<tr>";
    for (const auto& cell : row) {
      out += "<td";
      if (!cell.css_class.empty()) out += " class=\"" + cell.css_class + "\"";
      if (cell.sort_value) out += " data-v=\"" + sort_key(*cell.sort_value) + "\"";
      out += ">" + escape(cell.text) + "</td>";
    }
    out += "</tr>";
  }
  out += "</tbody></table>";
  return out;
}

}  // namespace kernscope::html
