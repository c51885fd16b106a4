// nsys analyze's six CUDA rules on every fixture: each rule's section of gold/analyze.txt (what
// nsys 2025.3.1 printed) equals kernscope's console rendering byte for byte; where nsys skipped a
// rule for missing data, kernscope skips it too.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "kernscope/analyze.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render_findings.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

std::map<std::string, std::string> gold_sections(const std::string& text) {
  // A section is everything after "Processing [FILE] with [.../rules/RULE.py]... \n" up to the next.
  static const std::regex header(R"(Processing \[[^\]]*\] with \[[^\]]*/rules/([a-z0-9_]+)\.py\]\.\.\. \n)");
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
  const auto gold = gold_sections(testing::read_file(dir / "gold/analyze.txt"));
  auto trace = open_trace((dir / "trace.sqlite.gz").string());
  ASSERT_TRUE(trace) << trace.error().message;
  const AnalyzeOptions options;
  const auto findings = run_nsys_rules(*trace, options);
  ASSERT_EQ(findings.size(), 6u);
  for (const auto& f : findings) {
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

INSTANTIATE_TEST_SUITE_P(Fixtures, NsysAnalyzeGolden,
                         ::testing::Values("llama_decode_h200", "graph_tiny_kernels_h200", "cloverleaf_perlmutter"));

}  // namespace
}  // namespace kernscope
