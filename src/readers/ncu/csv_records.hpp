// CSV records as Nsight Compute writes them to stdout: every field quoted, "" for a quote inside a
// field, fields that may hold line breaks (rule descriptions), and ncu's own message lines
// (==PROF==, ==WARNING==, ==ERROR==) or the profiled program's output before and between records.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernscope::readers::ncu {

struct CsvText {
  std::vector<std::vector<std::string>> records;  // from the first record starting with "ID" on
  std::vector<std::string> messages;              // ncu's ==...== lines, in order
  std::size_t skipped_lines = 0;                  // other lines that were not CSV records
};

// A record starts at a line that begins with a quote; other lines are messages or program output.
// Records before the header (the first whose first field is "ID") are dropped with the other lines.
CsvText split_ncu_csv(std::string_view text);

}  // namespace kernscope::readers::ncu
