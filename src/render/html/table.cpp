#include "render/html/table.hpp"

#include <cmath>

#include "render/html/html_text.hpp"

namespace kernscope::html {

TableCell text_cell(std::string text) { return {std::move(text), std::nullopt, ""}; }
TableCell name_cell(std::string name) { return {std::move(name), std::nullopt, "name"}; }
TableCell number_cell(double value, std::string text) { return {std::move(text), value, ""}; }
TableCell duration_cell(double ns) { return {duration(ns), ns, ""}; }

SortableTable sortable_table(const std::string& id, const Table& table, std::size_t limit) {
  std::vector<TableColumn> columns;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    // A column is numeric when its first non-empty cell is a number.
    bool numeric = false;
    for (const auto& row : table.rows) {
      if (c >= row.size() || std::holds_alternative<std::monostate>(row[c])) continue;
      numeric = !std::holds_alternative<std::string>(row[c]);
      break;
    }
    columns.push_back({table.columns[c].name, numeric});
  }
  SortableTable out(id, columns);
  for (std::size_t r = 0; r < table.rows.size() && (limit == 0 || r < limit); ++r) {
    std::vector<TableCell> cells;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      const Cell cell = c < table.rows[r].size() ? table.rows[r][c] : Cell{};
      if (const auto* text = std::get_if<std::string>(&cell)) {
        cells.push_back(c == 0 ? name_cell(*text) : text_cell(*text));
        continue;
      }
      if (std::holds_alternative<std::monostate>(cell)) {
        cells.push_back(number_cell(0, ""));
        continue;
      }
      const double value = std::holds_alternative<std::int64_t>(cell) ? static_cast<double>(std::get<std::int64_t>(cell)) : std::get<double>(cell);
      const bool whole = std::holds_alternative<std::int64_t>(cell);
      cells.push_back(table.columns[c].unit == Unit::kDuration
                          ? duration_cell(value)
                          : number_cell(value, whole ? std::to_string(std::get<std::int64_t>(cell)) : fixed(value, std::fabs(value) >= 100 ? 1 : 3)));
    }
    out.add_row(std::move(cells));
  }
  return out;
}

std::string SortableTable::finish() const {
  std::string out = "<div class=\"table-wrap\"><table class=\"sortable\" id=\"" + escape(id_) + "\"><thead><tr>";
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
      out += '>';  // appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on ">" + string&&
      out += escape(cell.text);
      out += "</td>";
    }
    out += "</tr>";
  }
  out += "</tbody></table></div>";
  return out;
}

}  // namespace kernscope::html
