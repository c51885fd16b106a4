// libFuzzer target: arbitrary bytes as a PyTorch-profiler / Chrome JSON trace through the Kineto
// reader (splitter, repair, simdjson), every report and the diagnosis. Small chunks make element
// boundaries fall everywhere. Nothing may crash, hang or trip a sanitizer.
#include <cstdint>
#include <string_view>

#include "exercise_trace.hpp"
#include "readers/kineto/byte_source.hpp"
#include "readers/kineto/kineto_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernscope;
  auto source = kineto::memory_byte_source(std::string_view(reinterpret_cast<const char*>(data), size));
  auto trace = kineto::read_kineto(*source, "fuzz.json", OpenOptions{});
  if (!trace) return 0;
  fuzz::exercise_trace(*trace);
  return 0;
}
