// Report's next actions in words: the one place their sentences are made, from each action's kind,
// part, facts and prediction (analyses/diagnosis/advice.hpp makes the actions as data).
#pragma once

#include <string>

#include "analyses/diagnosis/diagnosis.hpp"

namespace kernscope {

// The action's sentence, with its prediction or why there is none.
std::string action_sentence(const ReportAction& action);

}  // namespace kernscope
