// Table renderers. CSV follows Python's csv module (minimal quoting, "\n" rows as nsys writes
// them); JSON follows json.dump(indent=2) with ASCII escapes, as nsys's JSON output does.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "kernscope/render.hpp"
#include "render/json_writer.hpp"

namespace kernscope {
namespace {

void write_delimited(std::ostream& out, const Table& table, const RenderOptions& options, char delimiter) {
  auto field = [&](const std::string& text) {
    const bool quote = text.find_first_of(std::string{delimiter, '"', '\r', '\n'}) != std::string::npos;
    if (!quote) {
      out << text;
      return;
    }
    out << '"';
    for (char c : text) {
      if (c == '"') out << '"';
      out << c;
    }
    out << '"';
  };
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    if (c) out << delimiter;
    field(column_header(table.columns[c], options.time_unit));
  }
  out << '\n';
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c) out << delimiter;
      field(format_cell(row[c], table.columns[c].unit, options.time_unit));
    }
    out << '\n';
  }
}

// A GitHub-flavoured Markdown table (to paste into an issue or a pull request): the console's headers,
// the CSV's cells (every digit, no grouping), numbers right-aligned, '|' and line breaks escaped.
void write_markdown(std::ostream& out, const Table& table, const RenderOptions& options) {
  auto cell_text = [](std::string text) {
    std::string escaped;
    for (const char c : text) {
      if (c == '|') escaped += "\\|";
      else if (c == '\n' || c == '\r') escaped += ' ';
      else escaped += c;
    }
    return escaped;
  };
  const std::size_t ncol = table.columns.size();
  if (options.console_title && !table.title.empty()) out << "**" << cell_text(table.title) << "** (" << table.report << ")\n\n";
  out << '|';
  for (std::size_t c = 0; c < ncol; ++c) out << ' ' << cell_text(column_header(table.columns[c], options.time_unit)) << " |";
  out << "\n|";
  for (std::size_t c = 0; c < ncol; ++c) {
    const bool numeric = std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
      return std::holds_alternative<std::int64_t>(row[c]) || std::holds_alternative<double>(row[c]);
    });
    out << (numeric ? " ---: |" : " :--- |");
  }
  out << '\n';
  for (const auto& row : table.rows) {
    out << '|';
    for (std::size_t c = 0; c < ncol; ++c) out << ' ' << cell_text(format_cell(row[c], table.columns[c].unit, options.time_unit)) << " |";
    out << '\n';
  }
}

// nsys's JSON reports are Python's json.dumps output: ASCII only, other characters as \uXXXX.
void json_string(std::ostream& out, std::string_view text) {
  std::string quoted;
  append_json_string(quoted, text, JsonText::kAscii);
  out << quoted;
}

void write_json(std::ostream& out, const Table& table, const RenderOptions& options) {
  std::vector<std::string> headers;
  for (const auto& c : table.columns) headers.push_back(column_header(c, options.time_unit));
  out << "[";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    out << (r ? ",\n  {" : "\n  {");
    const auto& row = table.rows[r];
    for (std::size_t c = 0; c < row.size(); ++c) {
      out << (c ? ",\n    " : "\n    ");
      json_string(out, headers[c]);
      out << ": ";
      const JsonCell cell = json_cell(row[c], table.columns[c].unit, options.time_unit);
      switch (cell.kind) {
        case JsonCell::Kind::kString: json_string(out, cell.text); break;
        case JsonCell::Kind::kNumber: out << cell.text; break;
        case JsonCell::Kind::kNull: out << "null"; break;
      }
    }
    out << "\n  }";
  }
  out << "\n]\n";
}

// nsys's console ("column") table: thousands separators in numbers, long names cut to 100
// characters with an ellipsis, headers centred, numbers right-aligned, text left-aligned.
constexpr std::size_t kMaxTextWidth = 100;

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string group_thousands(const std::string& number) {
  std::size_t begin = number[0] == '-' ? 1 : 0;
  std::size_t end = number.find('.');
  if (end == std::string::npos) end = number.size();
  std::string out = number.substr(0, begin);
  for (std::size_t i = begin; i < end; ++i) {
    out += number[i];
    const std::size_t left = end - i - 1;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  out += number.substr(end);
  return out;
}

// A UTF-8 text cut to `width` characters (its first width - 1 and an ellipsis) when it is wider.
std::string cut_to_width(const std::string& text, std::size_t width) {
  if (display_width(text) <= width) return text;
  std::size_t bytes = 0, chars = 0;
  while (bytes < text.size() && chars < width - 1) {
    ++bytes;
    while (bytes < text.size() && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) ++bytes;
    ++chars;
  }
  return text.substr(0, bytes) + "\xE2\x80\xA6";  // …
}

// nsys sizes and aligns each column from its header and the first 100 rows only (text cut to 100
// characters): a longer text further down is cut to the column's width with an ellipsis, and a column
// with no number in those rows is left-aligned even where numbers follow (nsys 2025.3.1's gold:
// cuda_api_trace on fuser_h200, nvtx_sum on the nsys-ai exports, cuda_gpu_trace's copy columns on
// graph_tiny_kernels_h200).
constexpr std::size_t kWidthSampleRows = 100;

void write_console(std::ostream& out, const Table& table, const RenderOptions& options) {
  const std::size_t ncol = table.columns.size();
  std::vector<std::string> headers(ncol);
  std::vector<std::size_t> width(ncol);
  std::vector<bool> numeric(ncol, false);
  std::vector<std::vector<std::string>> cells(table.rows.size(), std::vector<std::string>(ncol));
  for (std::size_t c = 0; c < ncol; ++c) {
    headers[c] = column_header(table.columns[c], options.time_unit);
    width[c] = display_width(headers[c]);
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    for (std::size_t c = 0; c < ncol; ++c) {
      const Cell& cell = table.rows[r][c];
      std::string text = format_cell(cell, table.columns[c].unit, options.time_unit);
      if (std::holds_alternative<std::string>(cell)) {
        text = cut_to_width(text, kMaxTextWidth);
      } else if (!text.empty()) {
        if (r < kWidthSampleRows) numeric[c] = true;  // alignment is decided on the same sample
        if (table.columns[c].unit != Unit::kPercent) text = group_thousands(text);
      }
      if (r < kWidthSampleRows) width[c] = std::max(width[c], display_width(text));
      cells[r][c] = std::move(text);
    }
  }
  for (std::size_t r = kWidthSampleRows; r < table.rows.size(); ++r) {
    for (std::size_t c = 0; c < ncol; ++c) {
      if (std::holds_alternative<std::string>(table.rows[r][c])) cells[r][c] = cut_to_width(cells[r][c], width[c]);
    }
  }
  auto pad = [](const std::string& s, std::size_t w, int align) {  // -1 left, 0 centre, 1 right
    const std::size_t len = display_width(s);
    if (len >= w) return s;
    const std::size_t marg = w - len;
    std::size_t left = align < 0 ? 0 : align > 0 ? marg : marg / 2;  // odd margins pad right
    return std::string(left, ' ') + s + std::string(marg - left, ' ');
  };
  if (options.console_title) out << "\n ** " << table.title << " (" << table.report << "):\n\n";
  for (std::size_t c = 0; c < ncol; ++c) out << (c ? "  " : " ") << pad(headers[c], width[c], 0);
  out << '\n';
  for (std::size_t c = 0; c < ncol; ++c) out << (c ? "  " : " ") << std::string(width[c], '-');
  out << '\n';
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < ncol; ++c) out << (c ? "  " : " ") << pad(row[c], width[c], numeric[c] ? 1 : -1);
    out << '\n';
  }
}

// One table with rows in a table format (render() below says what an empty one writes).
void write_rows(std::ostream& out, const Table& table, const RenderOptions& options) {
  switch (options.format) {
    case Format::kCsv: write_delimited(out, table, options, ','); break;
    case Format::kTsv: write_delimited(out, table, options, '\t'); break;
    case Format::kJson: write_json(out, table, options); break;
    case Format::kTable: write_console(out, table, options); break;
    case Format::kMarkdown: write_markdown(out, table, options); break;
  }
}

// The table formats, one row each: the names that select it (the first is its name in format lists)
// and its files' extension. A format added to Format is added here and written in render() below.
struct FormatRow {
  Format format;
  std::vector<std::string_view> names;
  std::string_view extension;
};
const std::vector<FormatRow>& format_rows() {
  static const std::vector<FormatRow> rows = {
      {Format::kTable, {"table", "column", "text"}, "txt"},
      {Format::kCsv, {"csv"}, "csv"},
      {Format::kTsv, {"tsv"}, "tsv"},
      {Format::kJson, {"json"}, "json"},
      {Format::kMarkdown, {"md"}, "md"},
  };
  return rows;
}

}  // namespace

Result<Format> parse_format(const std::string& text) {
  for (const auto& row : format_rows()) {
    if (std::find(row.names.begin(), row.names.end(), text) != row.names.end()) return row.format;
  }
  return make_error(ErrorCode::kInvalidArgument, "unknown format '" + text + "' (expected table, csv, tsv, json or md)");
}

std::string format_extension(Format format) {
  for (const auto& row : format_rows()) {
    if (row.format == format) return std::string(row.extension);
  }
  return "txt";
}

std::vector<std::string> table_format_names(const std::string& first) {
  std::vector<std::string> names{first};
  for (const auto& row : format_rows()) {
    if (row.format != Format::kTable) names.emplace_back(row.names.front());
  }
  return names;
}

void render(std::ostream& out, const Table& table, const RenderOptions& options) {
  if (table.rows.empty()) {
    if (options.header_when_empty && options.format != Format::kTable && options.format != Format::kJson) {
      RenderOptions header = options;
      header.header_when_empty = false;
      header.nsys_empty_report = false;
      write_rows(out, table, header);  // no rows: the header alone
      return;
    }
    if (!options.nsys_empty_report) return;
    if (options.format == Format::kJson) out << "[\n]\n";
    if (options.format == Format::kTable && options.console_title) {
      out << "\n ** " << table.title << " (" << table.report << "):\n\nReport was successfully run, but no data was returned.\n\n";
    }
    return;
  }
  write_rows(out, table, options);
}


std::string table_json(const Table& table, const RenderOptions& options) {
  if (table.rows.empty()) return "[]";
  RenderOptions json = options;
  json.format = Format::kJson;
  std::ostringstream out;
  render(out, table, json);
  return out.str();
}

std::string named_tables_json(const std::vector<std::pair<std::string, const Table*>>& tables, const RenderOptions& options) {
  JsonWriter json(0);
  json.begin_object();
  for (const auto& [name, table] : tables) json.key(name).raw(table_json(*table, options));
  json.end_object();
  return json.finish();
}

}  // namespace kernscope
