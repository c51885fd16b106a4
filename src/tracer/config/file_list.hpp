// The list of traced processes that `kernscope record` reads when the program ends
// (KERNSCOPE_FILE_LIST). Every process appends its lines with one write() each (O_APPEND, so
// lines of concurrent processes do not interleave):
//   PATH                               a trace file was started (the tracer when CUDA starts, or the
//                                      Python host hook writing a file of its own)
//   #finished<TAB>PID<TAB>PATH<TAB>CMD  the tracer finished PATH for process PID running CMD
//   #empty<TAB>PID<TAB>PATH<TAB>CMD     the process recorded no GPU activity and no API call, and
//                                      the tracer removed PATH (a torchrun parent, a compiler worker)
// A path with no later line belongs to a process that was killed before its tracer finished, or to a
// file the Python host hook wrote (also after an #empty line for that path: it keeps pid and command).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kernscope::tracer {

struct ListedProcess {
  enum class State { kStarted, kFinished, kEmpty } state = State::kStarted;
  std::string path;
  std::int64_t pid = 0;     // 0 when only the start line was written
  std::string command;
};

// A command line for the list: arguments joined by spaces, tabs and newlines made spaces, at most
// 200 characters ("..." when cut).
std::string list_command(const std::vector<std::string>& argv);
// This process's command line from /proc/self/cmdline (list_command's form; "" when unreadable).
std::string own_command();

std::string finished_line(std::int64_t pid, const std::string& path, const std::string& command);
std::string empty_line(std::int64_t pid, const std::string& path, const std::string& command);

// Appends `line` and a newline in one write(); false when the file cannot be written.
bool append_to_file_list(const std::string& list, const std::string& line);

// One entry per path, in the order paths first appear, with the last state said for it.
std::vector<ListedProcess> parse_file_list(std::string_view text);

}  // namespace kernscope::tracer
