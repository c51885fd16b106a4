#include "tracer/config/file_list.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <map>

namespace kernscope::tracer {
namespace {

constexpr std::size_t kCommandMax = 200;
constexpr std::string_view kFinished = "#finished\t";
constexpr std::string_view kEmpty = "#empty\t";

std::string process_line(std::string_view tag, std::int64_t pid, const std::string& path, const std::string& command) {
  return std::string(tag) + std::to_string(pid) + "\t" + path + "\t" + command;
}

}  // namespace

std::string list_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  if (out.size() > kCommandMax) out = out.substr(0, kCommandMax - 3) + "...";
  return out;
}

std::string own_command() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  std::string arg;
  for (char c : raw) {
    if (c == '\0') {
      argv.push_back(arg);
      arg.clear();
    } else {
      arg += c;
    }
  }
  if (!arg.empty()) argv.push_back(arg);
  return list_command(argv);
}

std::string finished_line(std::int64_t pid, const std::string& path, const std::string& command) {
  return process_line(kFinished, pid, path, command);
}

std::string empty_line(std::int64_t pid, const std::string& path, const std::string& command) {
  return process_line(kEmpty, pid, path, command);
}

bool append_to_file_list(const std::string& list, const std::string& line) {
  const int fd = ::open(list.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string text = line + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::vector<ListedProcess> parse_file_list(std::string_view text) {
  std::vector<ListedProcess> out;
  std::map<std::string, std::size_t, std::less<>> index;
  auto entry = [&](const std::string& path) -> ListedProcess& {
    auto [it, inserted] = index.emplace(path, out.size());
    if (inserted) out.push_back({ListedProcess::State::kStarted, path, 0, {}});
    return out[it->second];
  };
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    const bool finished = line.starts_with(kFinished), empty = line.starts_with(kEmpty);
    if (!finished && !empty) {
      if (line.front() == '#') continue;  // the tracer's paths are absolute; '#' lines are tags
      // A path listed again after its tracer removed it: the Python host hook wrote a file there
      // (GC ranges of a process without CUDA work), which is then summarized as it is.
      ListedProcess& p = entry(std::string(line));
      if (p.state == ListedProcess::State::kEmpty) p.state = ListedProcess::State::kStarted;
      continue;
    }
    line.remove_prefix(finished ? kFinished.size() : kEmpty.size());
    const std::size_t tab1 = line.find('\t');
    const std::size_t tab2 = tab1 == std::string_view::npos ? tab1 : line.find('\t', tab1 + 1);
    std::int64_t pid = 0;
    if (tab2 == std::string_view::npos ||
        std::from_chars(line.data(), line.data() + tab1, pid).ec != std::errc() || pid <= 0) {
      continue;  // not a line this protocol writes: ignored rather than taken for a path
    }
    ListedProcess& p = entry(std::string(line.substr(tab1 + 1, tab2 - tab1 - 1)));
    p.state = finished ? ListedProcess::State::kFinished : ListedProcess::State::kEmpty;
    p.pid = pid;
    p.command = std::string(line.substr(tab2 + 1));
  }
  return out;
}

}  // namespace kernscope::tracer
