// Golden tests: every report kernscope shares with `nsys stats`, on every fixture, must equal what
// nsys 2025.3.1 printed for the same file (tests/fixtures/nsys/*/gold), byte for byte: CSV, the
// --timeunit us variant, JSON and the console table, plain and under time/NVTX filters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/reports.hpp"
#include "kernscope/trace_filter.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

namespace fs = std::filesystem;

struct GoldCase {
  std::string fixture;
  std::string report;   // as given to --report
  fs::path gold;
  Format format = Format::kCsv;
  TimeUnit unit = TimeUnit::kNs;
  std::string filter_args;  // "--filter-time X" / "--filter-nvtx X" or empty
  std::string name;         // test name
};

std::string stem_of(const fs::path& p) {
  std::string name = p.filename().string();
  for (const char* ext : {".gz", ".csv", ".json", ".txt"}) {
    if (name.size() > std::strlen(ext) && name.ends_with(ext)) name.resize(name.size() - std::strlen(ext));
  }
  return name;
}

std::string report_of(std::string stem) {
  for (auto [suffix, option] : {std::pair{"_base", ":base"}, std::pair{"_mangled", ":mangled"}}) {
    if (stem.ends_with(suffix)) return stem.substr(0, stem.size() - std::strlen(suffix)) + option;
  }
  return stem;
}

std::string sanitize(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

std::vector<GoldCase> discover() {
  std::vector<GoldCase> cases;
  for (const auto& fixture : fs::directory_iterator(testing::fixtures_dir() / "nsys")) {
    if (!fixture.is_directory()) continue;
    const std::string fx = fixture.path().filename().string();
    const fs::path gold = fixture.path() / "gold";
    for (const auto& f : fs::directory_iterator(gold)) {
      if (!f.is_regular_file() || f.path().filename() == "analyze.txt") continue;
      const std::string report = report_of(stem_of(f.path()));
      cases.push_back({fx, report, f.path(), Format::kCsv, TimeUnit::kNs, "", sanitize(fx + "_" + report)});
    }
    for (const auto& f : fs::directory_iterator(gold / "variants")) {
      std::string stem = stem_of(f.path());
      GoldCase c{fx, "", f.path(), Format::kCsv, TimeUnit::kNs, "", ""};
      if (stem.starts_with("us_")) c.unit = TimeUnit::kUs;
      else if (stem.starts_with("ms_")) c.unit = TimeUnit::kMs;
      else if (stem.starts_with("sec_")) c.unit = TimeUnit::kS;
      else if (stem.starts_with("json_")) c.format = Format::kJson;
      else if (stem.starts_with("col_")) c.format = Format::kTable;
      else continue;
      c.report = report_of(stem.substr(stem.find('_') + 1));
      c.name = sanitize(fx + "_" + stem);
      cases.push_back(c);
    }
    for (const auto& dir : fs::directory_iterator(gold / "filters")) {
      std::string args = testing::read_file(dir.path() / "args.txt");
      while (!args.empty() && (args.back() == '\n' || args.back() == '\r')) args.pop_back();
      for (const auto& f : fs::directory_iterator(dir.path())) {
        if (f.path().filename() == "args.txt") continue;
        const std::string report = report_of(stem_of(f.path()));
        cases.push_back({fx, report, f.path(), Format::kCsv, TimeUnit::kNs, args,
                         sanitize(fx + "_" + dir.path().filename().string() + "_" + report)});
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const GoldCase& a, const GoldCase& b) { return a.name < b.name; });
  return cases;
}

// Traces are shared between cases: loading the 21 MB export once keeps the suite fast.
const Trace& load(const std::string& fixture) {
  static std::map<std::string, Trace> cache;
  auto it = cache.find(fixture);
  if (it == cache.end()) {
    auto trace = open_trace((testing::fixtures_dir() / "nsys" / fixture / "trace.sqlite.gz").string());
    if (!trace) throw std::runtime_error(trace.error().message);
    it = cache.emplace(fixture, std::move(*trace)).first;
  }
  return it->second;
}

class NsysGolden : public ::testing::TestWithParam<GoldCase> {};

TEST_P(NsysGolden, EqualsNsysOutput) {
  const GoldCase& c = GetParam();
  const std::string want = testing::read_file(c.gold);
  auto request = parse_report(c.report);
  ASSERT_TRUE(request) << request.error().message;

  Trace filtered;
  const Trace* trace = &load(c.fixture);
  if (!c.filter_args.empty()) {
    FilterSpec spec;
    const auto space = c.filter_args.find(' ');
    const std::string flag = c.filter_args.substr(0, space), value = c.filter_args.substr(space + 1);
    if (flag == "--filter-time") {
      auto window = parse_time_window(value);
      ASSERT_TRUE(window) << window.error().message;
      spec.time = *window;
    } else {
      ASSERT_EQ(flag, "--filter-nvtx");
      spec.nvtx = value;
    }
    auto filter = resolve_filter(*trace, spec);
    if (!filter) {
      // nsys skipped the report (range not found): its output is empty; kernscope reports the error.
      EXPECT_EQ(filter.error().code, ErrorCode::kNotFound) << filter.error().message;
      EXPECT_TRUE(want.empty()) << "nsys produced output, but kernscope could not apply " << c.filter_args;
      return;
    }
    auto copy = open_trace((testing::fixtures_dir() / "nsys" / c.fixture / "trace.sqlite.gz").string());
    ASSERT_TRUE(copy);
    filtered = std::move(*copy);
    apply_filter(filtered, *filter);
    trace = &filtered;
  }

  auto table = run_report(*trace, *request);
  if (!table) {
    ASSERT_EQ(table.error().code, ErrorCode::kNoData) << table.error().message;
    EXPECT_TRUE(want.empty()) << "kernscope skipped the report (" << table.error().message
                              << ") but nsys produced output";
    return;
  }
  std::ostringstream out;
  render(out, *table, RenderOptions{c.format, c.unit});
  const std::string got = out.str();
  EXPECT_TRUE(got == want) << c.gold << "\nfirst difference at " << testing::first_difference(got, want);
}

INSTANTIATE_TEST_SUITE_P(AllReports, NsysGolden, ::testing::ValuesIn(discover()),
                         [](const ::testing::TestParamInfo<GoldCase>& info) { return info.param.name; });

TEST(NsysGoldenCoverage, EveryReportHasGoldOnEveryFixture) {
  // A report silently dropped from the gold folders would make the suite pass vacuously.
  const auto cases = discover();
  for (const char* fixture : {"llama_decode_h200", "graph_tiny_kernels_h200", "cloverleaf_perlmutter"}) {
    for (const auto& report : report_names()) {
      const bool found = std::any_of(cases.begin(), cases.end(), [&](const GoldCase& c) {
        return c.fixture == fixture && c.report == report && c.filter_args.empty() && c.format == Format::kCsv &&
               c.unit == TimeUnit::kNs;
      });
      EXPECT_TRUE(found) << "no gold for " << report << " on " << fixture;
    }
  }
  EXPECT_GT(cases.size(), 100u);
}

}  // namespace
}  // namespace kernscope
