// What an analysis takes besides its trace: the spec of each option (the CLI and Python build their
// arguments from it) and groups of traces (diff's sides, compare's columns). Plain types, kept apart
// from analysis.hpp (the session's API) so analyses can describe their options and read groups
// without including the layer above them (ARCHITECTURE.md, the layers block).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

enum class OptionKind {
  kText,     // one value
  kInteger,  // one whole number (checked when the request is parsed)
  kNumber,   // one real number
  kFlag,     // present or not
  kList,     // repeatable
};

// Defaults on every member (see AnalysisSpec): rows may leave the trailing ones out.
struct OptionSpec {
  std::string name = {};   // "--name" on the command line, name= in Python
  char short_name = 0;     // "-x", 0 for none
  OptionKind kind = OptionKind::kText;
  std::string default_value = {};
  std::string help = {};
  bool required = false;
};

// Option values as given (strings), checked against the spec by run_analysis.
using OptionValues = std::map<std::string, std::vector<std::string>>;

// One side or column: one trace, or several runs of the same program (their spread is the noise
// a gate must see past). The label names it in outputs (default: the first file's stem).
struct TraceGroup {
  std::string label;
  std::vector<const Trace*> runs;
};

}  // namespace kernscope
