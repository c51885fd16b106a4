// A test-only library for tests/cli/native_python_probe_test.py: loaded into a real CPython with
// ctypes, it answers what the tracer would decide there (a Python process: the native sampler stays
// off and the Python hook samples).
#include "tracer/native_recording.hpp"

extern "C" __attribute__((visibility("default"))) int kernscope_process_runs_python() {
  return kernscope::tracer::process_runs_python() ? 1 : 0;
}
