// nsys analyze's six CUDA rules on every fixture: each rule's section of gold/analyze.txt (what
// nsys 2025.3.1 printed) equals kernscope's console rendering byte for byte; where nsys skipped a
// rule for missing data, kernscope skips it too. Where the gold has `nsys analyze --format json`
// files (gold/analyze/<rule>.json), each equals kernscope's rows of that rule in nsys's JSON.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "golden/gold_layout.hpp"
#include "analyses/nsys/analyze.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "render/render_findings.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

std::map<std::string, std::string> gold_sections(const std::string& text) {
  // A section is everything after "Processing [FILE] with [.../rules/RULE.py]... \n" (with "(OPTIONS)"
  // before the dots when options were given) up to the next.
  static const std::regex header(R"(Processing \[[^\]]*\] with \[[^\]]*/rules/([a-z0-9_]+)\.py\](?:\([^)]*\))?\.\.\. \n)");
  std::map<std::string, std::string> sections;
  std::string rule;
  std::size_t body = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), header), end; it != end; ++it) {
    if (!rule.empty()) sections[rule] = text.substr(body, static_cast<std::size_t>(it->position()) - body);
    rule = (*it)[1];
    body = static_cast<std::size_t>(it->position() + it->length());
  }
  if (!rule.empty()) sections[rule] = text.substr(body);
  return sections;
}

class NsysAnalyzeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(NsysAnalyzeGolden, SixRulesEqualNsys) {
  const auto dir = testing::fixtures_dir() / "nsys" / GetParam();
  const auto gold = gold_sections(testing::read_file(testing::existing(dir / "gold/analyze.txt")));
  auto trace = open_trace((dir / "trace.sqlite.xz").string());
  ASSERT_TRUE(trace) << trace.error().message;
  const AnalyzeOptions options;
  const auto findings = run_nsys_rules(*trace, options);
  ASSERT_EQ(findings.size(), 6u);
  for (const auto& f : findings) {
    if (auto it = testing::gold_skips().differs.find({GetParam(), "analyze.txt#" + f.rule});
        it != testing::gold_skips().differs.end()) {
      std::cout << "[ SKIPPED ] " << f.rule << ": kernscope differs from nsys here (gold_skips.txt): " << it->second << '\n';
      continue;
    }
    ASSERT_TRUE(gold.contains(f.rule)) << f.rule;
    const std::string& want = gold.at(f.rule);
    if (want.starts_with("SKIPPED:")) {
      EXPECT_TRUE(f.skipped) << f.rule << " was skipped by nsys: " << want;
      continue;
    }
    EXPECT_FALSE(f.skipped) << f.rule << ": " << f.skip_reason;
    const std::string got = render_finding_console(f, options.rows);
    EXPECT_TRUE(got == want) << f.rule << " first difference at " << testing::first_difference(got, want);
  }
}

// nsys writes, per rule, the rows it found as a JSON list like its stats reports ("[\n]\n" when it found
// none, an empty file when it skipped the rule), and, as on the console, only the top 50.
TEST_P(NsysAnalyzeGolden, JsonRowsEqualNsys) {
  const auto dir = testing::fixtures_dir() / "nsys" / GetParam();
  if (!std::filesystem::is_directory(dir / "gold/analyze")) GTEST_SKIP() << "no nsys analyze --format json gold";
  auto trace = open_trace((dir / "trace.sqlite.xz").string());
  ASSERT_TRUE(trace) << trace.error().message;
  const AnalyzeOptions options;
  int compared = 0;
  for (const auto& f : run_nsys_rules(*trace, options)) {
    const auto gold_rel = "analyze/" + f.rule + ".json";
    const auto path = testing::existing(dir / "gold" / gold_rel);
    if (!std::filesystem::exists(path)) {
      EXPECT_TRUE(f.skipped || f.rows.rows.empty()) << f.rule << ": kernscope found rows, nsys wrote no file";
      continue;
    }
    if (testing::gold_skips().differs.contains({GetParam(), gold_rel})) continue;
    const std::string want = testing::read_file(path);
    if (f.skipped) {
      EXPECT_TRUE(want.empty()) << f.rule << ": kernscope skipped it (" << f.skip_reason << "), nsys did not";
      continue;
    }
    std::ostringstream got;
    RenderOptions json{Format::kJson, TimeUnit::kNs};
    json.nsys_empty_report = true;
    render(got, f.rows, json);
    EXPECT_TRUE(got.str() == want) << f.rule << " first difference at " << testing::first_difference(got.str(), want);
    ++compared;
  }
  std::cout << compared << " rules compared\n";
}

// The three rules with thresholds, run by nsys at other values than its defaults (gold/analyze_options/:
// command.txt is the nsys command, analyze.txt its console output, RULE.csv its --format csv rows): the
// thresholds must reach the rules, not only the defaults' numbers.
TEST_P(NsysAnalyzeGolden, NonDefaultThresholdsEqualNsys) {
  const auto dir = testing::fixtures_dir() / "nsys" / GetParam() / "gold/analyze_options";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no nsys analyze gold at non-default thresholds";
  const std::string command = testing::read_file(dir / "command.txt");
  const auto option = [&](const char* name) {
    std::smatch m;
    const std::regex re(std::string(name) + "=([0-9]+)");
    EXPECT_TRUE(std::regex_search(command, m, re)) << name << " not in " << command;
    return m.empty() ? 0 : std::stoll(m[1]);
  };
  AnalyzeOptions options;
  options.gap_ms = option("gap");
  options.utilization_threshold = static_cast<int>(option("threshold"));
  options.utilization_chunks = static_cast<int>(option("chunks"));
  options.rows = static_cast<std::size_t>(option("rows"));
  ASSERT_NE(options.gap_ms, AnalyzeOptions{}.gap_ms);
  ASSERT_NE(options.utilization_threshold, AnalyzeOptions{}.utilization_threshold);
  ASSERT_NE(options.utilization_chunks, AnalyzeOptions{}.utilization_chunks);
  const auto gold = gold_sections(testing::read_file(dir / "analyze.txt"));
  ASSERT_EQ(gold.size(), 3u);
  auto trace = open_trace((testing::fixtures_dir() / "nsys" / GetParam() / "trace.sqlite.xz").string());
  ASSERT_TRUE(trace) << trace.error().message;
  int compared = 0;
  for (const auto& f : run_nsys_rules(*trace, options)) {
    if (!gold.contains(f.rule)) continue;
    const std::string got = render_finding_console(f, options.rows);
    EXPECT_TRUE(got == gold.at(f.rule)) << f.rule << " first difference at "
                                        << testing::first_difference(got, gold.at(f.rule));
    std::ostringstream csv;
    render(csv, f.rows, RenderOptions{Format::kCsv, TimeUnit::kNs});
    const std::string want_csv = testing::read_file(dir / (f.rule + ".csv"));
    // nsys's CSV holds the rows shown (rows=N), kernscope's table every offending one.
    std::string shown;
    std::istringstream lines(csv.str());
    std::string line;
    for (std::size_t n = 0; n <= options.rows && std::getline(lines, line); ++n) shown += line + "\n";
    EXPECT_TRUE(shown == want_csv) << f.rule << " csv first difference at " << testing::first_difference(shown, want_csv);
    ++compared;
  }
  EXPECT_EQ(compared, 3);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NsysAnalyzeGolden, ::testing::ValuesIn(testing::gold_fixture_names()));

}  // namespace
}  // namespace kernscope
