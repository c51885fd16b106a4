// The names engines and PyTorch give a step (one forward pass, one iteration), one home for the
// analyses that find steps in a trace (analyses/steps/step_windows) and the tracer that counts them
// while a program runs (record --step-range auto, tail capture).
#pragma once

#include <optional>
#include <string_view>

#include "kernscope/phase.hpp"

namespace kernscope {

// The phase a step annotation's text states (kUnknown when it names a step but not its phase), or
// nullopt when the text is not a step annotation. `text` is the range's text without its domain.
// Recognised: SGLang's "step[MODE ...]", vLLM's "execute_[N_]context_C(..)_generation_G(..)",
// TensorRT-LLM's "_forward_step N: C ctx reqs, G gen reqs", and names that are a step word as a
// whole after the last ':' or '/' and without a trailing step number (decode_step_12, ProfilerStep#3,
// prefill, execute_model...), never a name that merely contains such a word (pre_forward).
std::optional<Phase> step_name_phase(std::string_view text);

}  // namespace kernscope
