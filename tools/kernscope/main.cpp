// kernscope: where is GPU time going, and what should I optimize next?
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

#include "base/progress.hpp"
#include "base/version.hpp"
#include "commands.hpp"

namespace kernscope::cli {

int fail(const Error& error) {
  std::cerr << "kernscope: error: " << error.message << '\n';
  return kExitBadInput;
}

// Column buffers of a megabyte or more are mapped on their own and given back when freed. glibc's
// default raises this threshold after each such free (up to 32 MiB), so the analyses' temporary
// tables then came from the heap and stayed resident after they were freed: on the 1 GB export
// `report` peaked 48 MiB higher (1010 vs 962 MiB, CPU time unchanged; bench/RESULTS.md).
void return_large_buffers_when_freed() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

}  // namespace kernscope::cli

int main(int argc, char** argv) {
  using namespace kernscope::cli;
  return_large_buffers_when_freed();
  CLI::App app{"kernscope: profile LLM inference on NVIDIA GPUs (reads Nsight Systems exports)", "kernscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kernscope::kVersionLine);
  // A progress line on standard error for work over 2 s, when it is a terminal (base/progress.hpp).
  app.add_flag("-q,--quiet", quiet_flag(), "no progress line on standard error (there is none unless it is a terminal)");
  std::map<const CLI::App*, Command> commands;
  for (const auto& spec : kernscope::analysis_specs()) {
    Command run = add_analysis(app, spec);
    commands.emplace(app.get_subcommands({}).back(), std::move(run));
  }
  Command record = add_record(app);
  commands.emplace(app.get_subcommands({}).back(), std::move(record));
  Command capture = add_capture(app);
  commands.emplace(app.get_subcommands({}).back(), std::move(capture));
  Command peaks = add_peaks(app);
  commands.emplace(app.get_subcommands({}).back(), std::move(peaks));
  Command fleet = add_fleet(app);
  commands.emplace(app.get_subcommands({}).back(), std::move(fleet));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 lists the words it could not place in the order it met them ("TRACE --by"), which
    // names the trace first: name the unknown option instead, where there is one.
    const auto parsed = app.get_subcommands();
    const CLI::App* sub = parsed.empty() ? nullptr : parsed.front();
    for (int i = 2; sub != nullptr && i < argc; ++i) {
      const std::string word = argv[i];
      if (word == "--") break;
      if (word.size() < 2 || word[0] != '-' || std::isdigit(static_cast<unsigned char>(word[1]))) continue;
      const std::string name = word.substr(0, word.find('='));
      if (sub->get_option_no_throw(name) == nullptr) {
        std::cerr << "kernscope " << sub->get_name() << ": error: unknown option " << name << " (see kernscope " << sub->get_name()
                  << " --help)\n";
        return kExitBadInput;
      }
    }
    std::cerr << "kernscope: error: " << e.what() << " (see kernscope --help)\n";
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    std::cerr << "kernscope: error: " << e.what() << " (see kernscope --help)\n";
    return kExitBadInput;
  }
  if (!quiet_flag() && isatty(STDERR_FILENO)) {
    // KERNSCOPE_PROGRESS_AFTER_MS: how long work runs before its line shows (2000; tests set 0).
    const char* after = std::getenv("KERNSCOPE_PROGRESS_AFTER_MS");
    const long ms = after && *after ? std::strtol(after, nullptr, 10) : 2000;
    kernscope::progress::enable(true, std::chrono::milliseconds(ms < 0 ? 2000 : ms));
  }
  try {
    for (const auto* sub : app.get_subcommands()) {
      const int rc = commands.at(sub)();
      // Skip the teardown of what the command built: freeing gigabytes of column vectors one by
      // one takes longer than the OS needs to reclaim the whole address space.
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(rc);
    }
  } catch (const std::exception& e) {
    std::cerr << "kernscope: internal error: " << e.what() << '\n';
    return 3;
  }
  return kExitBadInput;
}
