// A main() for the fuzz targets in a build without libFuzzer (the Release build of `make test`):
// every input file named, or found in a named folder, goes once through LLVMFuzzerTestOneInput,
// as libFuzzer does when it is given files instead of a corpus to grow. So the seeds and every
// input the real fuzzing kept (tests/fuzz/corpus) are replayed on every `make test`, at the
// optimisation users run; a crash, an abort or a hang fails the test that runs this program.
// Fuzzing itself (mutation, coverage, ASan/UBSan) is the clang build's: `make fuzz-smoke`, `make fuzz`.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> inputs_of(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path, ec)) {
      if (entry.is_regular_file()) found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
  } else {
    found.push_back(path);
  }
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  std::size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const auto files = inputs_of(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "%s: no input files in %s\n", argv[0], argv[i]);
      return 2;
    }
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
        return 2;
      }
      const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++replayed;
    }
  }
  std::printf("%s: %zu inputs replayed\n", argv[0], replayed);
  return 0;
}
