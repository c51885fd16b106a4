// Regression gates for CI: `kernscope diff --fail-if "tpot_p50 > +5%" A B` fails only when the
// condition holds AND the change lies outside the runs' own noise, judged by a seeded bootstrap:
// the per-step figures (or the runs, when each side has several) are resampled with replacement,
// and the gate fails when the whole confidence interval of the change lies beyond the threshold
// (and so excludes 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/diff/diff_figures.hpp"
#include "kernscope/error.hpp"

namespace kernscope {

// The grammar, printed with every malformed expression.
std::string_view gate_grammar();

struct GateCondition {
  std::string expression;  // as written
  std::string metric;      // ttft, tpot_p50, ..., total_kernel_time, class, kernel
  std::string subject;     // class or kernel name
  char op = '>';           // '>': B above A by more than the threshold; '<': below by more
  double threshold = 0;    // percent when relative, else nanoseconds
  bool relative = true;
};
Result<GateCondition> parse_gate(const std::string& expression);

struct BootstrapOptions {
  std::int64_t resamples = 2000;
  std::uint64_t seed = 1;
  double confidence = 0.95;
};

struct GateVerdict {
  GateCondition condition;
  double a = 0, b = 0;        // the metric on each side (ns)
  double change = 0;          // percent when relative, else ns
  double low = 0, high = 0;   // the confidence interval of the change
  std::string noise_from;     // what was resampled ("64 and 64 decode steps", "3 and 3 runs", ...)
  bool holds = false;         // the condition on the measured change
  bool beyond_noise = false;  // the interval lies beyond the threshold
  bool failed = false;        // both: exit code 1
  std::string evidence;       // one sentence with the numbers
};

// Errors (exit 2): a metric one side cannot give (no decode steps for tpot_*), an unknown class,
// a kernel name that matches nothing.
Result<GateVerdict> evaluate_gate(const GateCondition& condition, const SideFigures& a, const SideFigures& b,
                                  const BootstrapOptions& options);

}  // namespace kernscope
