// Helpers for tests: read plain, gzip- or xz-compressed files (through the readers' one home of
// decompression), locate fixtures.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "readers/compressed_file.hpp"

namespace kernscope::testing {

inline std::filesystem::path fixtures_dir() { return KERNSCOPE_FIXTURES_DIR; }

inline std::string read_file(const std::filesystem::path& path) {
  if (path.extension() == ".gz" || path.extension() == ".xz") {
    const auto compression = path.extension() == ".gz" ? readers::Compression::kGzip : readers::Compression::kXz;
    auto bytes = readers::decompress_file(path.string(), compression);
    if (!bytes) throw std::runtime_error(bytes.error().message);
    return std::string(bytes->begin(), bytes->end());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fixture file by its plain name: the file itself, else its .xz or .gz (nsys gold files over
// 4 kB are kept xz-compressed; their names in tests stay the plain ones).
inline std::filesystem::path existing(const std::filesystem::path& path) {
  for (const char* suffix : {"", ".xz", ".gz"}) {
    auto candidate = path;
    candidate += suffix;
    if (std::filesystem::exists(candidate)) return candidate;
  }
  return path;
}

// The first differing line of two texts, for readable failures.
inline std::string first_difference(const std::string& got, const std::string& want) {
  std::istringstream a(got), b(want);
  std::string la, lb;
  int line = 1;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) return "identical";
    if (la != lb || ga != gb) {
      return "line " + std::to_string(line) + ":\n  kernscope: " + (ga ? la.substr(0, 300) : "<end>") +
             "\n  nsys:      " + (gb ? lb.substr(0, 300) : "<end>");
    }
    ++line;
  }
}

}  // namespace kernscope::testing
