#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "kernscope/render.hpp"

namespace kernscope {
namespace {

std::string render_to_string(const Table& t, Format f, TimeUnit u = TimeUnit::kNs) {
  std::ostringstream out;
  render(out, t, RenderOptions{f, u});
  return out.str();
}

Table sample_table() {
  Table t;
  t.report = "demo";
  t.title = "Demo";
  t.columns = {{"Time", Unit::kPercent}, {"Total Time", Unit::kDuration}, {"Bytes", Unit::kBytes}, {"Name"}};
  t.rows.push_back({25.1, std::int64_t{56241290}, std::int64_t{131072000}, std::string("a, \"quoted\" name")});
  t.rows.push_back({Cell{}, 7216.0, 0.5, std::string("caf\xC3\xA9")});
  return t;
}

TEST(FormatCell, PythonFloatReprAndUnits) {
  EXPECT_EQ(format_cell(7216.0, Unit::kDuration, TimeUnit::kNs), "7216.0");
  EXPECT_EQ(format_cell(6865.4, Unit::kDuration, TimeUnit::kNs), "6865.4");
  EXPECT_EQ(format_cell(1e16, Unit::kNone, TimeUnit::kNs), "1e+16");
  EXPECT_EQ(format_cell(std::int64_t{56241290}, Unit::kDuration, TimeUnit::kUs), "56241.290");
  EXPECT_EQ(format_cell(758.5, Unit::kDuration, TimeUnit::kUs), "0.759");  // x * 0.001, as nsys
  EXPECT_EQ(format_cell(std::int64_t{25344}, Unit::kBytes, TimeUnit::kNs), "0.025");
  EXPECT_EQ(format_cell(std::int64_t{23999982336}, Unit::kThroughput, TimeUnit::kNs), "23999.982");
  EXPECT_EQ(format_cell(Cell{}, Unit::kDuration, TimeUnit::kNs), "");
  EXPECT_EQ(column_header({"Total Time", Unit::kDuration}, TimeUnit::kMs), "Total Time (ms)");
  EXPECT_EQ(column_header({"Bytes", Unit::kBytes}, TimeUnit::kNs), "Bytes (MB)");
}

TEST(Render, CsvQuotesLikePythonCsv) {
  EXPECT_EQ(render_to_string(sample_table(), Format::kCsv),
            "Time (%),Total Time (ns),Bytes (MB),Name\n"
            "25.1,56241290,131.072,\"a, \"\"quoted\"\" name\"\n"
            ",7216.0,0.000,caf\xC3\xA9\n");
}

TEST(Render, JsonEscapesNonAscii) {
  const std::string json = render_to_string(sample_table(), Format::kJson);
  EXPECT_NE(json.find("\"Name\": \"caf\\u00e9\""), std::string::npos) << json;
  // nsys writes a NULL cell as "" (its gold: e.g. "QAvg (ns)": "" in json_cuda_kern_exec_sum on fuser_h200).
  EXPECT_NE(json.find("\"Time (%)\": \"\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"Name\": \"a, \\\"quoted\\\" name\""), std::string::npos) << json;
}

TEST(Render, MarkdownTableEscapesPipesAndAlignsNumbers) {
  Table t = sample_table();
  t.rows.push_back({1.0, std::int64_t{3}, std::int64_t{0}, std::string("a|b\nc")});
  // Written by hand from GitHub's table syntax: numbers right-aligned (---:), text left (:---), a '|'
  // inside a cell escaped, a line break a space; the cells are the CSV's.
  EXPECT_EQ(render_to_string(t, Format::kMarkdown),
            "**Demo** (demo)\n\n"
            "| Time (%) | Total Time (ns) | Bytes (MB) | Name |\n"
            "| ---: | ---: | ---: | :--- |\n"
            "| 25.1 | 56241290 | 131.072 | a, \"quoted\" name |\n"
            "|  | 7216.0 | 0.000 | caf\xC3\xA9 |\n"
            "| 1.0 | 3 | 0.000 | a\\|b c |\n");
  EXPECT_EQ(parse_format("md").value(), Format::kMarkdown);
  EXPECT_EQ(format_extension(Format::kMarkdown), "md");
  const auto names = table_format_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "md"), names.end());
}

TEST(Render, EmptyTableWritesNothing) {
  Table t = sample_table();
  t.rows.clear();
  for (auto f : {Format::kCsv, Format::kTsv, Format::kJson, Format::kTable, Format::kMarkdown}) EXPECT_EQ(render_to_string(t, f), "");
}

TEST(Render, ConsoleTableGroupsThousandsAndTruncates) {
  Table t;
  t.report = "demo";
  t.title = "Demo";
  t.columns = {{"Total Time", Unit::kDuration}, {"Name"}};
  t.rows.push_back({std::int64_t{1234567}, std::string(150, 'k')});
  const std::string text = render_to_string(t, Format::kTable);
  EXPECT_NE(text.find("1,234,567"), std::string::npos);
  EXPECT_NE(text.find(std::string(99, 'k') + "\xE2\x80\xA6"), std::string::npos);
  EXPECT_EQ(text.find(std::string(100, 'k')), std::string::npos);
}

}  // namespace
}  // namespace kernscope
