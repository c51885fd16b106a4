// Rows of a tab-separated fixture (gzip-compressed or plain: zlib reads both), '#' lines left out.
// Shared by the demangler and kernel-identity tests, whose name pairs are kept as such files.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

namespace kernscope::testing {

inline std::vector<std::vector<std::string>> read_tsv_fixture(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  EXPECT_NE(in, nullptr) << "cannot open " << path;
  std::vector<std::vector<std::string>> rows;
  if (in == nullptr) return rows;
  std::string line;
  char buffer[1 << 16];
  while (gzgets(in, buffer, sizeof buffer) != nullptr) {
    line += buffer;
    if (line.empty() || line.back() != '\n') continue;  // a line longer than the buffer
    line.pop_back();
    if (!line.empty() && !line.starts_with('#')) {
      std::vector<std::string> fields;
      std::size_t start = 0;
      for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
        fields.push_back(line.substr(start, tab - start));
      }
      fields.push_back(line.substr(start));
      rows.push_back(std::move(fields));
    }
    line.clear();
  }
  gzclose(in);
  return rows;
}

}  // namespace kernscope::testing
