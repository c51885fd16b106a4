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

// For profiler traces where an engine's step shows only as a Python function (torch.profiler's
// python_function events, with_stack=True): the functions engines run once per step, whose names
// are not step annotations elsewhere (a Python function named `generate` or `forward` is a loop or a
// module, not a step). Text-generation-inference's Model.generate_token (text_generation_server/
// models/*.py: one prefill or decode step of the batch; its OpenTelemetry span of the same name is
// not in GPU profiles) and vLLM's execute_model (worker and model runner). kUnknown: the name does
// not state the phase; nullopt for any other function. `text` is Kineto's "path(line): name" or the
// bare name.
std::optional<Phase> engine_step_function_phase(std::string_view text);

}  // namespace kernscope
