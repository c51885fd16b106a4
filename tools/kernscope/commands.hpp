// Each subcommand registers its options on the CLI11 app and returns the function that runs it.
// The CLI is wiring only: parse, call the library, print, map errors to exit codes.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "kernscope/analysis.hpp"
#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::cli {

inline constexpr int kExitBadInput = 2;

using Command = std::function<int()>;

// `kernscope NAME` for one analysis of the library's registry (kernscope/analysis.hpp).
// -q/--quiet, before the subcommand or on an analysis command: no progress line (base/progress.hpp).
bool& quiet_flag();

Command add_analysis(CLI::App& app, const AnalysisSpec& spec);
// `kernscope record`: runs a program under the tracer (not an analysis of a trace).
Command add_record(CLI::App& app);
// `kernscope capture`: opens and closes windows of a live capture (record --paused).
Command add_capture(CLI::App& app);
// `kernscope peaks`: runs kernscope-peaks (measured GPU peaks), a CUDA program of its own.
Command add_peaks(CLI::App& app);

// `kernscope fleet`: hands its arguments to the Python package's fleet tier (python3 -m kernscope.fleet).
Command add_fleet(CLI::App& app);

// One line on stderr, exit code 2: the contract for every kind of bad input.
int fail(const Error& error);

// Moves a loaded trace where it stays until the process exits: main ends with std::_Exit, and
// the OS reclaims gigabytes of columns faster than their destructors free them.
inline Trace& keep_until_exit(Trace&& trace) { return *new Trace(std::move(trace)); }

}  // namespace kernscope::cli
