// `kernscope diff` and `kernscope compare` (analyses/diff): their JSON documents and the text a
// user reads. The runners (src/session/run_diff.cpp, run_compare.cpp) hold the options and the plan;
// the tables themselves come from the analysis.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analyses/diff/compare.hpp"
#include "analyses/diff/diff.hpp"
#include "analyses/diff/diff_figures.hpp"
#include "analyses/diff/gate.hpp"
#include "kernscope/render.hpp"

namespace kernscope {

// What a diff shows: the result, the two sides measured, its tables (phases, classes, kernels,
// kernel tails, nvtx, gates: the order `--table` names them) and the gates' verdicts.
struct DiffDocument {
  const DiffResult& diff;
  const SideFigures& a;
  const SideFigures& b;
  const std::vector<Table>& tables;
  const std::vector<GateVerdict>& verdicts;
  BootstrapOptions bootstrap;
  bool failed = false;
};

// {"a", "b", "identity", "nothing_in_common", "notes", "headline", "phases", "classes", "kernels",
// "kernel_tails", "nvtx", "gates", "failed"} (docs/interfaces.md).
std::string render_diff_json(const DiffDocument& d, const RenderOptions& options);
// The headline, the first `limit` rows (0: all) of the phase, class, kernel and NVTX tables, the
// kernels only one side has, and the gates' verdicts.
std::string render_diff_text(const DiffDocument& d, const RenderOptions& options, std::size_t limit);

// {"labels", "notes", "steps", "classes"}.
std::string render_compare_json(const Comparison& c, const RenderOptions& options);
// Both tables and the notes.
std::string render_compare_text(const Comparison& c, const RenderOptions& options);

}  // namespace kernscope
