// `kernscope peaks`: runs kernscope-peaks (tools/kernscope-peaks, a CUDA program built where nvcc
// and cuBLASLt are) with the arguments as given. It is a program of its own so the CLI needs no
// CUDA; found beside this binary, else on PATH.
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <vector>

#include "base/find_program.hpp"
#include "commands.hpp"

namespace kernscope::cli {
namespace {

std::string find_peaks_program() {
  char path[PATH_MAX] = {0};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) {
    const auto beside = std::filesystem::path(std::string(path, static_cast<std::size_t>(n))).parent_path() / "kernscope-peaks";
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return find_program("kernscope-peaks");
}

}  // namespace

Command add_peaks(CLI::App& app) {
  auto* sub = app.add_subcommand("peaks",
                                 "Measure this GPU's HBM bandwidth and BF16/FP8 GEMM rates into a peaks file for --peaks "
                                 "(runs kernscope-peaks; its --help lists the options)");
  sub->prefix_command();  // every argument goes to kernscope-peaks as given,
  sub->set_help_flag();   // --help too
  return [sub]() -> int {
    const std::string program = find_peaks_program();
    if (program.empty()) {
      return fail(Error{ErrorCode::kNotFound,
                        "peaks: kernscope-peaks is not installed (it is built where a CUDA compiler and cuBLASLt are found)"});
    }
    std::vector<std::string> args = sub->remaining();
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    return fail(Error{ErrorCode::kIo, "peaks: cannot run " + program});
  };
}

}  // namespace kernscope::cli
