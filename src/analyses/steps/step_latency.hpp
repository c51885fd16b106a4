// What a user of an inference server feels, read from the steps: time to first token (the last
// prefill group's steps, each until its token exists) and time per output token (the last decode
// group's steps, from the clock that fits them: their wall, or the GPU period where they overlap).
// Split from steps.cpp, which finds the steps and their figures; steps.hpp has the fields.
#pragma once

#include <vector>

#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// The capture window (live capture) a time lies in, or -1 (none, or a trace recorded whole).
int capture_window_of(const Trace& trace, TimeNs t);

// result.ttft and ttft_samples from `steps` (not yet moved into result), with a note where a
// prefill mostly waited.
void read_ttft(const std::vector<Step>& steps, StepAnalysis& result);

// result.tpot, tpot_samples and tpot_from from result.steps and result.groups, with notes.
void read_tpot(const Trace& trace, StepAnalysis& result);

}  // namespace kernscope
