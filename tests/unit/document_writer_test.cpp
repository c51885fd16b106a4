// The one writer of every command's output (src/session/document_writer.cpp): which writer a format
// gets, what the bare table formats write, where notes go. Expected texts are nsys's CSV and console
// conventions written out by hand for two two-row tables.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "render/json_writer.hpp"
#include "session/document_writer.hpp"

namespace kernscope {
namespace {

Table table(const std::string& report, std::int64_t first) {
  Table t;
  t.report = report;
  t.title = "Title of " + report;
  t.columns = {{"Total Time", Unit::kDuration}, {"Name"}};
  t.rows.push_back({first, std::string("a")});
  t.rows.push_back({first + 1, std::string("b")});
  return t;
}

Document two_tables() {
  Document d;
  d.tables = {table("one", 10), table("two", 20)};
  d.notes = {{"own_note", NoteSeverity::kInfo, "said by the document's own writers"}};
  d.messages = {"always on stderr"};
  return d;
}

TEST(DocumentWriter, BareTablesInCsvWithTheNotesOnStderr) {
  Document d = two_tables();
  d.bare_tables = {1, 0};
  d.text = [](const std::vector<Table>&, const RenderOptions&) { return std::string("own text\n"); };
  auto out = write_document(d, "csv", TimeUnit::kNs);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->text, "Total Time (ns),Name\n20,a\n21,b\n\nTotal Time (ns),Name\n10,a\n11,b\n");
  EXPECT_EQ(out->messages, (std::vector<std::string>{"always on stderr", "said by the document's own writers"}));
  EXPECT_EQ(out->tables.size(), 2u);
}

TEST(DocumentWriter, OwnWritersSayTheNotesThemselves) {
  Document d = two_tables();
  d.text = [](const std::vector<Table>& tables, const RenderOptions& options) {
    return "own text of " + std::to_string(tables.size()) + " tables, table format " + (options.format == Format::kTable ? "yes" : "no");
  };
  for (const std::string format : {"table", "text", "column"}) {
    auto out = write_document(d, format, TimeUnit::kNs);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->text, "own text of 2 tables, table format yes") << format;
    EXPECT_EQ(out->messages, std::vector<std::string>{"always on stderr"}) << format;
  }
}

TEST(DocumentWriter, JsonOfOneTableIsItsRowsOfSeveralAnObjectByReport) {
  Document d = two_tables();
  d.bare_tables = {0};
  auto one = write_document(d, "json", TimeUnit::kNs);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->text, "[\n  {\n    \"Total Time (ns)\": 10,\n    \"Name\": \"a\"\n  },\n  {\n    \"Total Time (ns)\": 11,\n    \"Name\": \"b\"\n  }\n]\n");
  d.bare_tables = {0, 1};
  auto both = write_document(d, "json", TimeUnit::kNs);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->text.substr(0, 9), "{\"one\": [") << both->text;
  EXPECT_NE(both->text.find("\"two\": ["), std::string::npos) << both->text;
  d.tables[0].rows.clear();
  d.bare_tables = {0};
  auto empty = write_document(d, "json", TimeUnit::kNs);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->text, "[]\n");  // parses, where an empty output would not
}

TEST(DocumentWriter, TextWithoutAWriterIsEveryTableAndTimeUnitsApply) {
  Document d = two_tables();
  auto out = write_document(d, "table", TimeUnit::kUs);
  ASSERT_TRUE(out);
  EXPECT_NE(out->text.find(" ** Title of one (one):"), std::string::npos) << out->text;
  EXPECT_NE(out->text.find(" ** Title of two (two):"), std::string::npos) << out->text;
  EXPECT_NE(out->text.find("Total Time (us)"), std::string::npos) << out->text;
  EXPECT_NE(out->text.find("0.021"), std::string::npos) << out->text;  // 21 ns in microseconds, as nsys writes it
}

TEST(DocumentWriter, OwnFormatsFramesAndUnknownFormats) {
  Document d = two_tables();
  d.own_formats["html"] = [](const std::vector<Table>&, const RenderOptions&) { return std::string("<html>"); };
  auto html = write_document(d, "html", TimeUnit::kNs);
  ASSERT_TRUE(html);
  EXPECT_EQ(html->text, "<html>");
  auto frames = write_document(d, std::string(kFramesFormat), TimeUnit::kNs);
  ASSERT_TRUE(frames);
  EXPECT_TRUE(frames->text.empty());
  EXPECT_EQ(frames->tables.size(), 2u);
  EXPECT_FALSE(write_document(d, "nosuch", TimeUnit::kNs));
  // A document of no tables and no writers (export writes its own file): nothing to print, no error.
  Document written;
  written.messages = {"wrote x"};
  auto out = write_document(written, "perfetto", TimeUnit::kNs);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->text.empty());
  EXPECT_EQ(out->messages, std::vector<std::string>{"wrote x"});
}

TEST(DocumentWriter, NsysReportsAndTableFiles) {
  Document d = two_tables();
  d.nsys_reports = true;
  d.tables[1].rows.clear();
  auto csv = write_document(d, "csv", TimeUnit::kNs);
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->text, "Total Time (ns),Name\n10,a\n11,b\n");  // an empty report writes nothing in CSV, as nsys
  auto json = write_document(d, "json", TimeUnit::kNs);
  ASSERT_TRUE(json);
  EXPECT_EQ(json->text.substr(json->text.size() - 4), "[\n]\n");  // and "[\n]\n" in JSON
  const auto dir = std::filesystem::temp_directory_path() / ("ks_docwriter_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  d.table_files = {(dir / "r_one").string(), (dir / "r_two").string()};
  auto files = write_document(d, "tsv", TimeUnit::kNs);
  ASSERT_TRUE(files);
  EXPECT_TRUE(files->text.empty());
  std::ifstream one(dir / "r_one.tsv");
  std::stringstream content;
  content << one.rdbuf();
  EXPECT_EQ(content.str(), "Total Time (ns)\tName\n10\ta\n11\tb\n");
  EXPECT_EQ(files->messages.back(), "wrote " + (dir / "r_two.tsv").string());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kernscope

namespace kernscope {
namespace {

// The same calls give JSON text and a tree; the tree holds what the text reads back as (numbers as
// json.loads reads them, invalid UTF-8 replaced), written out here by hand.
TEST(JsonWriterTree, TheSameCallsGiveTheValuesTheTextReadsBackAs) {
  auto write = [](JsonWriter& j) {
    j.begin_object().member("int", 3).member("whole", 5.0).member("half", 0.5).member("nan", std::nan(""));
    j.member("bad", std::string("a\xFF" "b")).member("yes", true).key("none").null();
    Table t;
    t.columns = {{"Total Time", Unit::kDuration}, {"Bytes", Unit::kBytes}, {"Name"}};
    t.rows.push_back({std::int64_t{7}, std::int64_t{131072000}, std::string("k")});
    t.rows.push_back({Cell{}, 2.5, std::string("m")});
    j.key("rows").rows(t, RenderOptions{Format::kJson, TimeUnit::kNs});
    j.key("list").begin_array().value(1).value("x").end_array().end_object();
  };
  JsonWriter text(0);
  write(text);
  EXPECT_EQ(text.finish(),
            "{\"int\": 3, \"whole\": 5, \"half\": 0.5, \"nan\": null, \"bad\": \"a\xEF\xBF\xBD" "b\", \"yes\": true, \"none\": null, "
            "\"rows\": [\n  {\n    \"Total Time (ns)\": 7,\n    \"Bytes (MB)\": 131.072,\n    \"Name\": \"k\"\n  },\n"
            "  {\n    \"Total Time (ns)\": \"\",\n    \"Bytes (MB)\": 0.000,\n    \"Name\": \"m\"\n  }\n], \"list\": [1, \"x\"]}\n");
  JsonWriter tree = JsonWriter::tree();
  write(tree);
  const JsonValue root = tree.take();
  const auto& object = std::get<JsonValue::Object>(root.v);
  ASSERT_EQ(object.size(), 9u);
  EXPECT_EQ(object[0].first, "int");
  EXPECT_EQ(std::get<long long>(object[0].second.v), 3);
  EXPECT_EQ(std::get<long long>(object[1].second.v), 5);  // "5" reads back as an integer
  EXPECT_EQ(std::get<double>(object[2].second.v), 0.5);
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(object[3].second.v));
  EXPECT_EQ(std::get<std::string>(object[4].second.v), "a\xEF\xBF\xBD" "b");
  EXPECT_TRUE(std::get<bool>(object[5].second.v));
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(object[6].second.v));
  const auto& rows = std::get<JsonValue::Array>(object[7].second.v);
  ASSERT_EQ(rows.size(), 2u);
  const auto& first = std::get<JsonValue::Object>(rows[0].v);
  EXPECT_EQ(first[0].first, "Total Time (ns)");
  EXPECT_EQ(std::get<long long>(first[0].second.v), 7);
  EXPECT_DOUBLE_EQ(std::get<double>(first[1].second.v), 131.072);  // MB, as the text writes it
  EXPECT_EQ(std::get<std::string>(first[2].second.v), "k");
  const auto& second = std::get<JsonValue::Object>(rows[1].v);
  EXPECT_EQ(std::get<std::string>(second[0].second.v), "");  // a NULL cell, as nsys writes it
  EXPECT_DOUBLE_EQ(std::get<double>(second[1].second.v), 0.0);
  const auto& list = std::get<JsonValue::Array>(object[8].second.v);
  EXPECT_EQ(std::get<long long>(list[0].v), 1);
  EXPECT_EQ(std::get<std::string>(list[1].v), "x");
}

}  // namespace
}  // namespace kernscope
