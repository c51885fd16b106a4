// Report's diagnosis in words: the one place its sentences are made, from the typed lines
// (analyses/diagnosis/diagnosis_lines.hpp) the analysis found.
#pragma once

#include <string>
#include <vector>

#include "analyses/diagnosis/diagnosis_lines.hpp"

namespace kernscope {

std::string diagnosis_sentence(const DiagnosisLine& line);
std::vector<std::string> diagnosis_sentences(const std::vector<DiagnosisLine>& lines);

}  // namespace kernscope
