// Writes report tables the way `nsys stats` does: CSV/TSV with nsys's headers and number formats,
// JSON as nsys's list of row objects, and a console table like nsys's "column" format.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/time_units.hpp"

namespace kernscope {

enum class Format { kTable, kCsv, kTsv, kJson, kMarkdown };
// A format's names ("table", "column" and "text" are the console table) and its files' extension.
// The formats are listed once, in render.cpp: a new one is added there and here, nowhere else.
Result<Format> parse_format(const std::string& text);
std::string format_extension(Format format);
// The table formats' names for an analysis's spec, `first` (the console table's name there: "table",
// or "text" for documents read as prose) leading.
std::vector<std::string> table_format_names(const std::string& first = "table");

struct RenderOptions {
  Format format = Format::kTable;
  TimeUnit time_unit = TimeUnit::kNs;
  bool console_title = true;  // the " ** Title (report):" block of the console table
  // A report that ran and found no rows, as `nsys stats` writes it: "[\n]\n" in JSON and, under the
  // console title, "Report was successfully run, but no data was returned."; CSV/TSV stay empty.
  // Off: an empty table writes nothing.
  bool nsys_empty_report = false;
  // CSV/TSV of a table without rows: its header line alone, so a reader still gets the columns
  // (kernscope's own tables; nsys writes nothing).
  bool header_when_empty = false;
};

// "Total Time (ns)", "Bytes (MB)", "Time (%)"...
std::string column_header(const Column& column, TimeUnit time_unit);
// A column's name for programs (Python's DataFrames, documents): snake_case with the unit as a suffix
// ("Total Time" in ns -> total_time_ns, "Time" in % -> time_pct, "StdDev" -> std_dev_ns); the
// values stay unscaled (ns, bytes, bytes per second, percent).
std::string column_key(const Column& column);
// One cell as nsys prints it in CSV (no quoting); "" for NULL.
std::string format_cell(const Cell& cell, Unit unit, TimeUnit time_unit);
// One cell as nsys's JSON reports hold it: NULL as the empty string (e.g. a kernel's Bytes (MB)), text
// as a string, a number as format_cell writes it, nan and infinities as null. The one home of these
// conventions: the JSON text render() writes and the values JsonWriter::tree() builds both take it.
struct JsonCell {
  enum class Kind : std::uint8_t { kString, kNumber, kNull };
  Kind kind = Kind::kNull;
  std::string text;  // the string, or the number's text
};
JsonCell json_cell(const Cell& cell, Unit unit, TimeUnit time_unit);

// An empty table writes nothing (nsys writes an empty file), unless options.nsys_empty_report.
void render(std::ostream& out, const Table& table, const RenderOptions& options);

// A table as a JSON value inside a document: its rows as render() writes them in JSON, "[]" when
// it has none.
std::string table_json(const Table& table, const RenderOptions& options);
// Tables as one JSON object, each under its name: {"name": rows, ...}.
std::string named_tables_json(const std::vector<std::pair<std::string, const Table*>>& tables, const RenderOptions& options);

}  // namespace kernscope
