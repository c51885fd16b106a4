#include "readers/ncu/csv_records.hpp"

namespace kernscope::readers::ncu {
namespace {

std::string_view line_at(std::string_view text, std::size_t pos) {
  const std::size_t end = text.find('\n', pos);
  std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Parses one record starting at `pos` (a line beginning with a quote); returns the position after it.
std::size_t parse_record(std::string_view text, std::size_t pos, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  bool quoted = false, in_quotes = false;
  while (pos < text.size()) {
    const char c = text[pos];
    if (in_quotes) {
      if (c == '"') {
        if (pos + 1 < text.size() && text[pos + 1] == '"') {
          field += '"';
          pos += 2;
          continue;
        }
        in_quotes = false;
      } else {
        field += c;
      }
      ++pos;
      continue;
    }
    if (c == '"' && field.empty() && !quoted) {
      quoted = in_quotes = true;
      ++pos;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      quoted = false;
      ++pos;
    } else if (c == '\n' || c == '\r') {
      break;
    } else {
      field += c;
      ++pos;
    }
  }
  fields.push_back(std::move(field));
  // The rest of the line (a CR) and its line break.
  while (pos < text.size() && text[pos] == '\r') ++pos;
  if (pos < text.size() && text[pos] == '\n') ++pos;
  return pos;
}

}  // namespace

CsvText split_ncu_csv(std::string_view text) {
  CsvText out;
  bool header_seen = false;
  std::vector<std::string> fields;
  std::size_t pos = 0;
  // A UTF-8 byte order mark before the first line.
  if (text.starts_with("\xEF\xBB\xBF")) pos = 3;
  while (pos < text.size()) {
    const std::string_view line = line_at(text, pos);
    if (line.starts_with("\"")) {
      pos = parse_record(text, pos, fields);
      if (!header_seen && !fields.empty() && fields[0] == "ID") header_seen = true;
      if (header_seen) {
        out.records.push_back(fields);
      } else {
        ++out.skipped_lines;
      }
      continue;
    }
    if (line.starts_with("==")) {
      out.messages.emplace_back(line);
    } else if (!line.empty()) {
      ++out.skipped_lines;
    }
    pos += line.size();
    while (pos < text.size() && text[pos] == '\r') ++pos;
    if (pos < text.size() && text[pos] == '\n') ++pos;
  }
  return out;
}

}  // namespace kernscope::readers::ncu
