// kernscope: where is GPU time going, and what should I optimize next?
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>

#include "commands.hpp"

namespace kernscope::cli {

int fail(const Error& error) {
  std::cerr << "kernscope: error: " << error.message << '\n';
  return kExitBadInput;
}

}  // namespace kernscope::cli

int main(int argc, char** argv) {
  using namespace kernscope::cli;
  CLI::App app{"kernscope: profile LLM inference on NVIDIA GPUs (reads Nsight Systems exports)", "kernscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kernscope 0.1.0");
  std::map<const CLI::App*, Command> commands;
  auto add = [&](Command (*adder)(CLI::App&)) {
    Command run = adder(app);
    commands.emplace(app.get_subcommands({}).back(), std::move(run));
  };
  add(add_stats);
  add(add_info);
  add(add_tail);
  add(add_ops);
  add(add_analyze);
  add(add_steps);
  add(add_report);
  add(add_export);
  add(add_record);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kernscope: error: " << e.what() << " (see kernscope --help)\n";
    return kExitBadInput;
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
