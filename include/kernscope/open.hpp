// Opening a trace: sniff the format, pick the reader, fill the model.
#pragma once

#include <string>

#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct OpenOptions {
  EventKinds kinds = kAllEventKinds;  // event kinds to load; others are only checked for presence
};

// Accepts Nsight Systems SQLite exports (.sqlite, .sqlite.gz) and .nsys-rep files (exported with
// `nsys export` when nsys is on PATH). Errors: kNotFound, kBadInput (with one clear line).
Result<Trace> open_trace(const std::string& path, const OpenOptions& options = {});

}  // namespace kernscope
