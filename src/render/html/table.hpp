// Tables people can sort: a click on a header sorts by that column (numbers by their value, not
// their text), a second click reverses. Every cell is escaped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernscope/table.hpp"

namespace kernscope::html {

struct TableCell {
  std::string text;
  std::optional<double> sort_value;  // numeric columns: the value to sort by
  std::string css_class;             // "name" for long names (wrapped anywhere)
};

TableCell text_cell(std::string text);
TableCell name_cell(std::string name);
TableCell number_cell(double value, std::string text);
TableCell duration_cell(double ns);  // shown with a unit, sorted by nanoseconds

struct TableColumn {
  std::string header;
  bool numeric = false;
};

class SortableTable {
 public:
  SortableTable(std::string id, std::vector<TableColumn> columns) : id_(std::move(id)), columns_(std::move(columns)) {}
  void add_row(std::vector<TableCell> cells) { rows_.push_back(std::move(cells)); }
  std::size_t size() const { return rows_.size(); }
  std::string finish() const;

 private:
  std::string id_;
  std::vector<TableColumn> columns_;
  std::vector<std::vector<TableCell>> rows_;
};

// A report table (kernscope::Table) as a sortable one: numbers sort by value, durations show a
// unit; at most `limit` rows (0: all).
SortableTable sortable_table(const std::string& id, const Table& table, std::size_t limit = 0);

}  // namespace kernscope::html
