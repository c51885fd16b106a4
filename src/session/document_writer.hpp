// The one writer of every command's output (render/document.hpp says what a document holds).
#pragma once

#include <string>

#include "kernscope/analysis.hpp"
#include "render/document.hpp"

namespace kernscope {

// The document in `format` (one of its spec's formats, or kFramesFormat: the tables alone).
Result<AnalysisOutput> write_document(Document document, const std::string& format, TimeUnit time_unit);

}  // namespace kernscope
