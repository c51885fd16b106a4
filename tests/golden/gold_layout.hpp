// Where the golden suites find nsys's gold: the fixtures under tests/fixtures/nsys, what
// gold_skips.txt says is not checked (fixtures awaiting collection, cases where kernscope differs),
// and the MANIFEST.txt that bench/gpu/gold_collect.sh writes beside the gold it made.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_files.hpp"

namespace kernscope::testing {

// gold_skips.txt, parsed. `awaiting`: fixture -> why; `differs`: (fixture, gold path) -> why;
// `cli_differs`: the same, for the command line only (tests/cli/golden_cli_test.py).
struct GoldSkips {
  std::map<std::string, std::string> awaiting;
  std::map<std::pair<std::string, std::string>, std::string> differs;
  std::map<std::pair<std::string, std::string>, std::string> cli_differs;
  std::vector<std::string> errors;  // malformed lines (the coverage test reports them)
};

inline GoldSkips read_gold_skips() {
  // Beside this header, whatever the build directory.
  const auto path = std::filesystem::path(__FILE__).parent_path() / "gold_skips.txt";
  GoldSkips skips;
  std::istringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind, fixture, gold_path, why;
    words >> kind >> fixture;
    const bool names_file = kind == "differs" || kind == "differs-cli";
    if (names_file) words >> gold_path;
    std::getline(words >> std::ws, why);
    if (fixture.empty() || why.empty() || (names_file && gold_path.empty())) {
      skips.errors.push_back(line);
    } else if (kind == "awaiting") {
      skips.awaiting[fixture] = why;
    } else if (kind == "differs") {
      skips.differs[{fixture, gold_path}] = why;
    } else if (kind == "differs-cli") {
      skips.cli_differs[{fixture, gold_path}] = why;
    } else {
      skips.errors.push_back(line);
    }
  }
  return skips;
}

inline const GoldSkips& gold_skips() {
  static const GoldSkips skips = read_gold_skips();
  return skips;
}

// Every folder of tests/fixtures/nsys, sorted (a fixture is a folder; the coverage test checks that
// each holds a trace and its gold).
inline std::vector<std::string> nsys_fixture_names() {
  std::vector<std::string> names;
  for (const auto& d : std::filesystem::directory_iterator(fixtures_dir() / "nsys")) {
    if (d.is_directory()) names.push_back(d.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The fixtures whose gold the suites compare against: not awaiting collection.
inline std::vector<std::string> gold_fixture_names() {
  std::vector<std::string> names;
  for (const auto& n : nsys_fixture_names()) {
    if (!gold_skips().awaiting.contains(n)) names.push_back(n);
  }
  return names;
}

// gold/MANIFEST.txt: the files gold_collect.sh made ("gold PATH") and left out ("left-out PATH WHY").
struct GoldManifest {
  bool present = false;
  std::set<std::string> gold;
  std::set<std::string> left_out;
};

inline GoldManifest read_manifest(const std::string& fixture) {
  GoldManifest m;
  const auto path = fixtures_dir() / "nsys" / fixture / "gold" / "MANIFEST.txt";
  if (!std::filesystem::exists(path)) return m;
  m.present = true;
  std::istringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind, file;
    words >> kind >> file;
    if (kind == "gold") m.gold.insert(file);
    if (kind == "left-out") m.left_out.insert(file);
  }
  return m;
}

}  // namespace kernscope::testing
