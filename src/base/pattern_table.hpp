// The tables of NAME<TAB>REGEX lines kernscope reads its name rules from (data/op_rules.tsv,
// data/moe_roles.tsv, data/spec_markers.tsv, and users' rule files): one reader of their lines, so
// comments, blank lines, CRLF endings and the "file:line:" of an error are alike everywhere. What a
// name means, and the order a table's errors are reported in, stay with its caller.
#pragma once

#include <string>
#include <vector>

#include "kernscope/error.hpp"

namespace kernscope {

struct PatternRow {
  std::string name, pattern;
  std::string where;  // "source:line", for the caller's errors
};

// Every line that is not blank or a comment ('#' first), split at its first tab. A line without a
// tab is an error: "source:line: expected <first_column><TAB>REGEX".
Result<std::vector<PatternRow>> read_pattern_rows(const std::string& text, const std::string& source, const std::string& first_column);

}  // namespace kernscope
