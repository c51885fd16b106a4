#include "tracer/native_recording.hpp"

#include <dlfcn.h>

#include <cstdio>

#include "tracer/native_sample_writer.hpp"
#include "tracer/native_symbols.hpp"

namespace kernscope::tracer {

bool process_runs_python() {
  // The interpreter's symbols are global in a Python process (python3 exports them; an embedding
  // program loads libpython globally to let extensions link against it).
  using IsInitialized = int (*)();
  auto initialized = reinterpret_cast<IsInitialized>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  return initialized != nullptr && initialized() != 0;
}

void NativeRecording::start(double hz) {
  hz_ = hz;
  if (hz <= 0) return;
  if (process_runs_python()) {
    python_ = true;
    return;
  }
  sampler_ = std::make_unique<NativeSampler>(NativeSamplerOptions{.hz = hz});
  if (!sampler_->start()) {
    why_not_ = sampler_->why();
    sampler_.reset();
  }
}

void NativeRecording::stop() {
  if (sampler_) sampler_->stop();
}

Result<void> NativeRecording::write(const std::string& path, std::uint32_t pid, const std::string& process_name) {
  if (hz_ <= 0 || python_) return {};
  NativeSymbolizer symbols;
  if (!sampler_) {
    char asked[32];
    std::snprintf(asked, sizeof asked, "%g", hz_);
    // "sampler_stopped" is the key the reader turns into a note.
    return append_native_samples(path, pid, process_name, NativeSamples{}, symbols,
                                 {{"sampler", kNativeSamplerName}, {"sampler_hz_asked", asked},
                                  {"sampler_stopped", "before it started: " + why_not_}});
  }
  return append_native_samples(path, pid, process_name, sampler_->samples(), symbols, sampler_->info());
}

}  // namespace kernscope::tracer
