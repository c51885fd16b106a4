// Golden tests: every report kernscope shares with `nsys stats`, on every fixture, must equal what
// nsys 2025.3.1 printed for the same file (tests/fixtures/nsys/*/gold), byte for byte: CSV, TSV, JSON
// and the console table, in ns/us/ms/sec, plain and under time/NVTX filters. Which fixtures and cases
// are left out, and why, is in gold_skips.txt (gold_layout.hpp reads it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "golden/gold_layout.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/reports.hpp"
#include "model/trace_filter.hpp"
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
  std::string gold_rel;     // the gold file's path under FIXTURE/gold (gold_skips.txt's PATH)
};

std::string stem_of(const fs::path& p) {
  std::string name = p.filename().string();
  for (const char* ext : {".gz", ".xz", ".csv", ".tsv", ".json", ".txt"}) {
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

// The gold file's name says what nsys was asked for: gold/<report>.csv (csv, ns);
// gold/variants/<prefix>_<report>.<ext> with prefix us/ms/sec (csv in that unit), tsv, json or col
// (console table); gold/filters/<case>/<report>.csv with the filter in args.txt.
bool apply_variant_prefix(const std::string& prefix, GoldCase& c) {
  static const std::map<std::string, std::pair<Format, TimeUnit>> kPrefixes = {
      {"us", {Format::kCsv, TimeUnit::kUs}},  {"ms", {Format::kCsv, TimeUnit::kMs}},
      {"sec", {Format::kCsv, TimeUnit::kS}},  {"tsv", {Format::kTsv, TimeUnit::kNs}},
      {"json", {Format::kJson, TimeUnit::kNs}}, {"col", {Format::kTable, TimeUnit::kNs}}};
  auto it = kPrefixes.find(prefix);
  if (it == kPrefixes.end()) return false;
  c.format = it->second.first;
  c.unit = it->second.second;
  return true;
}

std::vector<GoldCase> discover() {
  std::vector<GoldCase> cases;
  for (const std::string& fx : testing::gold_fixture_names()) {
    const fs::path gold = testing::fixtures_dir() / "nsys" / fx / "gold";
    if (!fs::is_directory(gold)) continue;  // the coverage test reports it
    // The gold file's plain name (gold_skips.txt's PATH): compressed files are named without .xz/.gz.
  auto relative = [&](const fs::path& p) {
    std::string rel = p.lexically_relative(gold).generic_string();
    if (rel.ends_with(".xz") || rel.ends_with(".gz")) rel.resize(rel.size() - 3);
    return rel;
  };
    for (const auto& f : fs::directory_iterator(gold)) {
      const std::string file = f.path().filename().string();
      if (!f.is_regular_file() || file == "analyze.txt" || file == "analyze.txt.xz" || file == "MANIFEST.txt") continue;
      const std::string report = report_of(stem_of(f.path()));
      cases.push_back({fx, report, f.path(), Format::kCsv, TimeUnit::kNs, "", sanitize(fx + "_" + report), relative(f.path())});
    }
    if (fs::is_directory(gold / "variants")) {
      for (const auto& f : fs::directory_iterator(gold / "variants")) {
        const std::string stem = stem_of(f.path());
        const auto underscore = stem.find('_');
        GoldCase c{fx, "", f.path(), Format::kCsv, TimeUnit::kNs, "", "", relative(f.path())};
        if (underscore == std::string::npos || !apply_variant_prefix(stem.substr(0, underscore), c)) continue;
        c.report = report_of(stem.substr(underscore + 1));
        c.name = sanitize(fx + "_" + stem);
        cases.push_back(c);
      }
    }
    if (fs::is_directory(gold / "filters")) {
      for (const auto& dir : fs::directory_iterator(gold / "filters")) {
        std::string args = testing::read_file(dir.path() / "args.txt");
        while (!args.empty() && (args.back() == '\n' || args.back() == '\r')) args.pop_back();
        for (const auto& f : fs::directory_iterator(dir.path())) {
          if (f.path().filename() == "args.txt") continue;
          const std::string report = report_of(stem_of(f.path()));
          cases.push_back({fx, report, f.path(), Format::kCsv, TimeUnit::kNs, args,
                           sanitize(fx + "_" + dir.path().filename().string() + "_" + report), relative(f.path())});
        }
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
    auto trace = open_trace((testing::fixtures_dir() / "nsys" / fixture / "trace.sqlite.xz").string());
    if (!trace) throw std::runtime_error(trace.error().message);
    it = cache.emplace(fixture, std::move(*trace)).first;
  }
  return it->second;
}

// The last filtered trace is kept: cases run sorted by name, so one filter case's reports come one
// after another and the export is opened and filtered once per case, not once per report.
const Trace& load_filtered(const std::string& fixture, const std::string& filter_args, const EventFilter& filter) {
  static std::string key;
  static Trace trace;
  if (key != fixture + '\n' + filter_args) {
    auto copy = open_trace((testing::fixtures_dir() / "nsys" / fixture / "trace.sqlite.xz").string());
    if (!copy) throw std::runtime_error(copy.error().message);
    trace = std::move(*copy);
    apply_filter(trace, filter);
    key = fixture + '\n' + filter_args;
  }
  return trace;
}

class NsysGolden : public ::testing::TestWithParam<GoldCase> {};

TEST_P(NsysGolden, EqualsNsysOutput) {
  const GoldCase& c = GetParam();
  if (auto it = testing::gold_skips().differs.find({c.fixture, c.gold_rel}); it != testing::gold_skips().differs.end()) {
    GTEST_SKIP() << "kernscope differs from nsys here (gold_skips.txt): " << it->second;
  }
  const std::string want = testing::read_file(c.gold);
  auto request = parse_report(c.report);
  ASSERT_TRUE(request) << request.error().message;

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
      // nsys skipped the report (range not found, or no NVTX at all): its output is empty; kernscope
      // reports the error.
      EXPECT_TRUE(filter.error().code == ErrorCode::kNotFound || filter.error().code == ErrorCode::kNoData)
          << filter.error().message;
      EXPECT_TRUE(want.empty()) << "nsys produced output, but kernscope could not apply " << c.filter_args;
      return;
    }
    trace = &load_filtered(c.fixture, c.filter_args, *filter);
  }

  auto table = run_report(*trace, *request);
  if (!table) {
    ASSERT_EQ(table.error().code, ErrorCode::kNoData) << table.error().message;
    EXPECT_TRUE(want.empty()) << "kernscope skipped the report (" << table.error().message
                              << ") but nsys produced output";
    return;
  }
  std::ostringstream out;
  RenderOptions options{c.format, c.unit};
  options.nsys_empty_report = true;
  render(out, *table, options);
  const std::string got = out.str();
  EXPECT_TRUE(got == want) << c.gold << "\nfirst difference at " << testing::first_difference(got, want);
}

INSTANTIATE_TEST_SUITE_P(AllReports, NsysGolden, ::testing::ValuesIn(discover()),
                         [](const ::testing::TestParamInfo<GoldCase>& info) { return info.param.name; });

TEST(NsysGoldenCoverage, EveryReportHasGoldOnEveryFixture) {
  // A report silently dropped from the gold folders would make the suite pass vacuously.
  const auto cases = discover();
  const auto fixtures = testing::gold_fixture_names();
  ASSERT_GE(fixtures.size(), 3u);
  for (const auto& fixture : fixtures) {
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

TEST(NsysGoldenCoverage, EveryFixtureHasItsTraceAndGold) {
  const auto& skips = testing::gold_skips();
  EXPECT_TRUE(skips.errors.empty()) << "malformed gold_skips.txt line: " << skips.errors.front();
  for (const auto& fixture : testing::nsys_fixture_names()) {
    const fs::path dir = testing::fixtures_dir() / "nsys" / fixture;
    if (skips.awaiting.contains(fixture)) {
      // Once collected, the fixture must be checked: a stale "awaiting" line would hide it.
      EXPECT_FALSE(fs::exists(dir / "gold" / "MANIFEST.txt"))
          << fixture << " has its gold now: remove its 'awaiting' line from gold_skips.txt";
      continue;
    }
    EXPECT_TRUE(fs::exists(dir / "trace.sqlite.xz")) << fixture << " has no trace.sqlite.xz";
    EXPECT_TRUE(fs::exists(testing::existing(dir / "gold" / "analyze.txt"))) << fixture << " has no gold/analyze.txt";
  }
  for (const auto& name : [&] {
         std::vector<std::string> v;
         for (const auto& [name, why] : skips.awaiting) v.push_back(name);
         return v;
       }()) {
    EXPECT_TRUE(fs::is_directory(testing::fixtures_dir() / "nsys" / name)) << "gold_skips.txt awaits no such fixture: " << name;
  }
  for (const auto* entries : {&skips.differs, &skips.cli_differs}) {
    for (const auto& [key, why] : *entries) {
      EXPECT_TRUE(fs::exists(testing::existing(testing::fixtures_dir() / "nsys" / key.first / "gold" / key.second.substr(0, key.second.find('#')))))
          << "gold_skips.txt names no such gold file: " << key.first << " " << key.second;
    }
  }
}

// Where gold_collect.sh made the gold, its MANIFEST lists every file: each listed file must be there,
// nothing unlisted may be, and every report must have each variant (or be listed as left out).
TEST(NsysGoldenCoverage, CollectedGoldMatchesItsManifest) {
  for (const auto& fixture : testing::gold_fixture_names()) {
    const auto manifest = testing::read_manifest(fixture);
    if (!manifest.present) continue;  // gold from before gold_collect.sh: the test above covers it
    const fs::path gold = testing::fixtures_dir() / "nsys" / fixture / "gold";
    for (const auto& file : manifest.gold) EXPECT_TRUE(fs::exists(gold / file)) << fixture << ": listed but missing: " << file;
    for (const auto& f : fs::recursive_directory_iterator(gold)) {
      const std::string rel = f.path().lexically_relative(gold).generic_string();
      if (f.is_regular_file() && rel != "MANIFEST.txt") {
        EXPECT_TRUE(manifest.gold.contains(rel)) << fixture << ": not made by gold_collect.sh: " << rel;
      }
    }
    const std::map<std::string, std::string> variants = {{"us", "csv"}, {"ms", "csv"}, {"sec", "csv"},
                                                         {"tsv", "tsv"}, {"json", "json"}, {"col", "txt"}};
    for (const auto& report : report_names()) {
      for (const auto& [prefix, ext] : variants) {
        const std::string file = "variants/" + prefix + "_" + report + "." + ext;
        const bool there = manifest.gold.contains(file) || manifest.gold.contains(file + ".xz") ||
                           manifest.left_out.contains(file + ".xz");
        EXPECT_TRUE(there) << fixture << ": no " << file << " (is the report in gold_collect.sh's REPORTS?)";
      }
    }
  }
}

}  // namespace
}  // namespace kernscope
