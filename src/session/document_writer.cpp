// The one writer of every command's output: a document's own renderings where it has them, else
// its tables in the table format asked for.
#include <fstream>
#include <sstream>

#include "session/document_writer.hpp"

namespace kernscope {
namespace {

// The tables alone, as the table formats write them (no writer of the document's own).
std::string write_tables(const Document& d, const RenderOptions& options) {
  std::ostringstream text;
  if (d.nsys_reports) {
    RenderOptions nsys = options;
    nsys.nsys_empty_report = true;
    bool first = true;
    for (const auto& table : d.tables) {
      if (!first && options.format != Format::kTable && !table.rows.empty()) text << '\n';
      render(text, table, nsys);
      if (!table.rows.empty()) first = false;
    }
    return text.str();
  }
  if (options.format == Format::kTable) {
    for (const auto& table : d.tables) render(text, table, options);
    return text.str();
  }
  if (options.format == Format::kJson) {
    std::vector<std::pair<std::string, const Table*>> named;
    for (const std::size_t i : d.bare_tables) {
      if (i < d.tables.size()) named.emplace_back(d.tables[i].report, &d.tables[i]);
    }
    if (named.size() == 1) return table_json(*named.front().second, options) + (named.front().second->rows.empty() ? "\n" : "");
    return named_tables_json(named, options);
  }
  RenderOptions delimited = options;
  delimited.header_when_empty = d.header_when_empty;
  for (std::size_t i = 0; i < d.bare_tables.size(); ++i) {
    if (i > 0) text << '\n';
    if (d.bare_tables[i] < d.tables.size()) render(text, d.tables[d.bare_tables[i]], delimited);
  }
  return text.str();
}

// stats --output PREFIX: each table in a file of its own, the format's extension added.
Result<void> write_table_files(const Document& d, const RenderOptions& options, std::vector<std::string>& messages) {
  RenderOptions nsys = options;
  nsys.nsys_empty_report = d.nsys_reports;
  for (std::size_t i = 0; i < d.tables.size() && i < d.table_files.size(); ++i) {
    const std::string path = d.table_files[i] + "." + format_extension(options.format);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file) render(file, d.tables[i], nsys);
    file.close();
    if (!file) return make_error(ErrorCode::kIo, "cannot write " + path);
    messages.push_back("wrote " + path);
  }
  return {};
}

}  // namespace

Result<AnalysisOutput> write_document(Document d, const std::string& format, TimeUnit time_unit) {
  AnalysisOutput out;
  out.messages = std::move(d.messages);
  out.summary = std::move(d.summary);
  out.exit_code = d.exit_code;
  if (d.json_document && !d.json) {
    // A document read as data gives the json format's text from the same writes as its values.
    d.json = [document = d.json_document](const std::vector<Table>&, const RenderOptions&) {
      JsonWriter json;
      document(json);
      return json.finish();
    };
  }
  if (format == kObjectFormat) {
    if (!d.json_document) return make_error(ErrorCode::kInvalidArgument, "this analysis gives tables, not a document");
    JsonWriter tree = JsonWriter::tree();
    d.json_document(tree);
    out.object = std::make_shared<const JsonValue>(tree.take());
  } else if (format != kFramesFormat) {
    RenderOptions options{Format::kTable, time_unit};
    const DocumentWriter* own = nullptr;
    if (const auto it = d.own_formats.find(format); it != d.own_formats.end()) {
      own = &it->second;
    } else if (auto parsed = parse_format(format)) {
      options.format = *parsed;
      if (options.format == Format::kTable && d.text) own = &d.text;
      if (options.format == Format::kJson && d.json) own = &d.json;
    } else if (!d.tables.empty() || d.text || d.json || !d.own_formats.empty()) {
      return std::unexpected(parsed.error());
    }  // else nothing to print (export writes its file itself)
    if (own) {
      out.text = (*own)(d.tables, options);
    } else if (!d.tables.empty()) {
      // Bare tables have no room for the document's notes: they go to standard error.
      for (auto& note : d.notes) out.messages.push_back(std::move(note.text));
      if (!d.table_files.empty()) {
        if (auto ok = write_table_files(d, options, out.messages); !ok) return std::unexpected(ok.error());
      } else {
        out.text = write_tables(d, options);
      }
    }
  }
  // Python's frames have no room for the notes either: they go with the messages (Python logs them).
  if (format == kFramesFormat) {
    for (auto& note : d.notes) out.messages.push_back(std::move(note.text));
  }
  out.tables = std::move(d.tables);
  return out;
}

}  // namespace kernscope
