// `record --sample cpu[:HZ]` inside the injected tracer: native stacks for programs that are not
// Python (a Python program's stacks come from kernscope's Python hook, which sees its frames; the
// native sampler would only see the interpreter's C loop). Started with the tracer, at the
// program's first CUDA call (a program that never starts CUDA never loads the tracer, so it is not
// sampled); written into the tracer's finished file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernscope/error.hpp"
#include "tracer/native_sampler.hpp"

namespace kernscope::tracer {

class NativeRecording {
 public:
  // Starts sampling at `hz` unless the process runs Python; `why_not()` says what was refused.
  void start(double hz);
  // Stops the sampling (first thing at the tracer's finish, so its own writing is not sampled).
  void stop();
  // Appends the samples and the sampler's account (or why there are none) to the finished trace.
  // Does nothing when sampling was not asked or Python's hook samples this process.
  Result<void> write(const std::string& path, std::uint32_t pid, const std::string& process_name);
  bool python() const { return python_; }
  const std::string& why_not() const { return why_not_; }
  std::size_t samples() const { return sampler_ ? sampler_->samples().time_ns.size() : 0; }

 private:
  double hz_ = 0;
  bool python_ = false;
  std::string why_not_;
  std::unique_ptr<NativeSampler> sampler_;
};

// True when this process runs a Python interpreter (Py_IsInitialized is found and answers yes).
bool process_runs_python();

}  // namespace kernscope::tracer
