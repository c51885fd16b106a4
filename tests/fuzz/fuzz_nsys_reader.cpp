// libFuzzer target: arbitrary bytes as an SQLite image through the nsys reader, every report and
// the diagnosis (which runs every other analysis).
// Nothing may crash, hang or trip a sanitizer; errors must come back as values.
#include <cstdint>
#include <vector>

#include "exercise_trace.hpp"
#include "readers/nsys_sqlite/nsys_sqlite_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernscope;
  if (!nsys::sniff_sqlite(data, size)) return 0;
  std::vector<unsigned char> bytes(data, data + size);
  auto db = nsys::Database::open_image(std::move(bytes), "fuzz");
  if (!db) return 0;
  auto trace = nsys::read_export(*db, "fuzz", OpenOptions{});
  if (!trace) return 0;
  fuzz::exercise_trace(*trace);
  return 0;
}
