// `kernscope fleet ...`: the fleet tier (many traces reduced to Parquet digests, DuckDB, a local
// process pool or Dask) lives in the Python package (python/kernscope/fleet), because Arrow,
// DuckDB and Dask are Python packages here. This command hands its arguments to
// `python3 -m kernscope.fleet` (KERNSCOPE_PYTHON names another interpreter) in place of itself.
// Run as the wheel's `kernscope` command, KERNSCOPE_PYTHON is the interpreter the package was
// installed for (python/_kernscope_cli sets it), not whichever python3 PATH finds first.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "commands.hpp"

namespace kernscope::cli {
namespace {

// Imports the package first so a missing one is one clear line (exit 2), not a traceback.
constexpr const char* kLauncher =
    "import sys\n"
    "try:\n"
    "    from kernscope.fleet.__main__ import main\n"
    // The extra's libraries are imported where they are used (digest, reduce, in worker processes
    // too): check them here (help needs none), so a missing one is this line and not a traceback
    // from a worker.
    "    if not {'-h', '--help'} & set(sys.argv[1:]):\n"
    "        import pyarrow, pyarrow.parquet, pyarrow.dataset, duckdb\n"
    "except ImportError as e:\n"
    "    sys.stderr.write('kernscope: error: kernscope fleet needs the Python package with its fleet extra '\n"
    "                     '(pip install \"kernscope[fleet]\"; make python): ' + str(e) + '\\n')\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[1:], prog='kernscope fleet'))\n";

}  // namespace

Command add_fleet(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet", "Many traces (hundreds of ranks) reduced in parallel to Parquet digests and "
                                          "queried with DuckDB; local processes or a Dask cluster (kernscope fleet --help)");
  cmd->prefix_command();  // every argument is the Python tool's
  cmd->set_help_flag();   // --help too
  return [cmd]() -> int {
    const char* env = std::getenv("KERNSCOPE_PYTHON");
    const std::string python = env && *env ? env : "python3";
    std::vector<std::string> args{python, "-c", kLauncher};
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(python.c_str(), argv.data());
    return fail(Error{ErrorCode::kNotFound, "kernscope fleet runs " + python + " -m kernscope.fleet: " + std::strerror(errno)});
  };
}

}  // namespace kernscope::cli
