// What every command returns, and the one place that turns it into the format asked for.
//
// An analysis fills a Document (its tables, and the renderings of its own document where it has
// one) and never looks at the format; session/document_writer.cpp picks the writer. The table formats (nsys's
// console table, csv, tsv, json and any added to include/kernscope/render.hpp) reach every command
// through here, so a new one is written in render.cpp alone.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernscope/notes.hpp"
#include "kernscope/render.hpp"
#include "render/json_writer.hpp"

namespace kernscope {

// A whole document in one format, made only when that format is asked for.
using DocumentWriter = std::function<std::string(const std::vector<Table>& tables, const RenderOptions& options)>;

struct Document {
  std::vector<Table> tables;  // Python's frames, and what the table formats write

  // The table formats, where the document has no writer of its own for the format: text writes every
  // table as a console table; the others write `bare_tables` (csv/tsv one table per file as nsys does,
  // more separated by a blank line; json one table's rows as nsys writes them, more as {"<report>": rows}).
  std::vector<std::size_t> bare_tables = {0};
  bool header_when_empty = false;  // csv/tsv of a table without rows: its header alone
  // nsys stats' reports: every table in every table format, an empty one as nsys says it ("[]", "no
  // data"), a blank line between non-empty ones outside the console table.
  bool nsys_reports = false;
  // Where set (one path per table, without extension), each table is written to its file with the
  // format's extension instead of standard output (`stats --output PREFIX`).
  std::vector<std::string> table_files;

  DocumentWriter text;  // the text format (table / text / column)
  DocumentWriter json;
  // A document read as data (info, analyze, report): written once into a JsonWriter, which gives the
  // json format's text and, for Python, the same values as objects (kObjectFormat) with no text between.
  std::function<void(JsonWriter&)> json_document;
  std::map<std::string, DocumentWriter> own_formats;  // formats of this document alone (html, collapsed...)

  std::vector<std::string> messages;        // standard error, in every format
  // What the document's own writers say beside their figures, with their kinds as the analyses gave
  // them; their texts go to standard error where a format writes the bare tables (csv, tsv, and json
  // or text where the document has no writer for them).
  std::vector<Note> notes;
  std::shared_ptr<const JsonValue> summary; // what an analysis that writes files did (export), for Python
  int exit_code = 0;                        // 1 when a regression gate failed (diff --fail-if)
};

}  // namespace kernscope
