#include "tracer/config/control_channel.hpp"
#include "base/thread_name.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace kernscope::tracer {
namespace {

constexpr std::size_t kMaxLine = 512;

Result<double> positive_number(std::string_view text, const char* what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v > 0)) {
    return make_error(ErrorCode::kInvalidArgument, std::string(what) + " must be a positive number, not '" + std::string(text) + "'");
  }
  return v;
}

bool fill_address(const std::string& path, sockaddr_un& address) {
  if (path.size() >= sizeof address.sun_path) return false;
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size());
  return true;
}

// Reads until a newline, the peer's close or the deadline; the line without its newline.
Result<std::string> read_line(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string line;
  char buffer[256];
  while (line.size() < kMaxLine) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return make_error(ErrorCode::kIo, "no answer in time");
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return make_error(ErrorCode::kIo, "no answer in time");
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buffer, static_cast<std::size_t>(n));
    if (const auto nl = line.find('\n'); nl != std::string::npos) return line.substr(0, nl);
  }
  if (line.empty()) return make_error(ErrorCode::kIo, "the connection closed without an answer");
  return line.substr(0, std::min(line.size(), kMaxLine));
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<ControlRequest> parse_control_request(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  ControlRequest r;
  if (line == "start") r.kind = ControlRequest::Kind::kStart;
  else if (line == "stop") r.kind = ControlRequest::Kind::kStop;
  else if (line == "status") r.kind = ControlRequest::Kind::kStatus;
  else if (line.starts_with("window duration=")) {
    auto s = positive_number(line.substr(16), "window duration");
    if (!s) return std::unexpected(s.error());
    r.kind = ControlRequest::Kind::kWindow;
    r.duration_s = *s;
  } else if (line.starts_with("window steps=")) {
    std::int64_t n = 0;
    const std::string_view digits = line.substr(13);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size() || n <= 0) {
      return make_error(ErrorCode::kInvalidArgument, "window steps must be a positive whole number, not '" + std::string(digits) + "'");
    }
    r.kind = ControlRequest::Kind::kWindow;
    r.steps = n;
  } else {
    return make_error(ErrorCode::kInvalidArgument,
                      "unknown request '" + std::string(line.substr(0, 80)) + "' (start, stop, status, window duration=S, window steps=N)");
  }
  return r;
}

std::string format_control_request(const ControlRequest& r) {
  switch (r.kind) {
    case ControlRequest::Kind::kStart: return "start";
    case ControlRequest::Kind::kStop: return "stop";
    case ControlRequest::Kind::kStatus: return "status";
    case ControlRequest::Kind::kWindow:
      return r.steps > 0 ? "window steps=" + std::to_string(r.steps) : "window duration=" + std::to_string(r.duration_s);
  }
  return "status";
}

std::string sessions_root(const std::function<const char*(const char*)>& getenv) {
  if (const char* dir = getenv("KERNSCOPE_RUNTIME_DIR"); dir && *dir) return dir;
  if (const char* dir = getenv("XDG_RUNTIME_DIR"); dir && *dir) return std::string(dir) + "/kernscope";
  return "/tmp/kernscope-" + std::to_string(::getuid());
}

std::string session_dir(const std::string& name, const std::function<const char*(const char*)>& getenv) {
  return sessions_root(getenv) + "/" + name;
}

std::string control_socket_path(const std::string& dir, std::int64_t pid) { return dir + "/" + std::to_string(pid) + ".sock"; }

std::vector<std::int64_t> session_pids(const std::string& dir) {
  std::vector<std::int64_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".sock")) continue;
    std::int64_t pid = 0;
    const auto [end, parse] = std::from_chars(name.data(), name.data() + name.size() - 5, pid);
    if (parse == std::errc() && end == name.data() + name.size() - 5 && pid > 0) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

Result<void> check_session_name(std::string_view name) {
  const bool plain = !name.empty() && name.size() <= 64 && name != "." && name != ".." &&
                     std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; });
  if (!plain) {
    return make_error(ErrorCode::kInvalidArgument, "session name '" + std::string(name.substr(0, 80)) +
                                                       "' (letters, digits, '.', '_' and '-', at most 64, not . or ..)");
  }
  return {};
}

Result<void> make_private_folder(const std::string& dir) {
  // Only this user may talk to the program: folders it creates are the user's alone (0700), and a
  // folder that is there already must be the user's own and not a link (a folder another user made
  // in /tmp in advance would let them reach the program).
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) {
    const auto parent = std::filesystem::path(dir).parent_path();
    if (!parent.empty() && ::lstat(parent.c_str(), &st) != 0) {
      if (auto r = make_private_folder(parent.string()); !r) return r;
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return make_error(ErrorCode::kIo, "cannot create " + dir + ": " + std::strerror(errno));
    }
    if (::lstat(dir.c_str(), &st) != 0) return make_error(ErrorCode::kIo, "cannot create " + dir);
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
    return make_error(ErrorCode::kIo, dir + " is not a folder of this user (a link, or another user's): not used for control sockets");
  }
  return {};
}

Result<std::unique_ptr<ControlServer>> ControlServer::listen(const std::string& path, Handler handler, Tick tick) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (auto r = make_private_folder(dir.string()); !r) return std::unexpected(r.error());
  sockaddr_un address{};
  if (!fill_address(path, address)) return make_error(ErrorCode::kInvalidArgument, "socket path too long: " + path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(ErrorCode::kIo, std::string("cannot create a socket: ") + std::strerror(errno));
  ::unlink(path.c_str());  // a stale socket of a process that had this pid before
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 8) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return make_error(ErrorCode::kIo, "cannot listen on " + path + ": " + why);
  }
  int wake[2] = {-1, -1};
  if (::pipe2(wake, O_CLOEXEC) != 0) {  // without it the thread could not be stopped
    const std::string why = std::strerror(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return make_error(ErrorCode::kIo, "cannot create a pipe: " + why);
  }
  return std::unique_ptr<ControlServer>(new ControlServer(path, fd, wake, std::move(handler), std::move(tick)));
}

ControlServer::ControlServer(std::string path, int fd, const int wake[2], Handler handler, Tick tick)
    : path_(std::move(path)), fd_(fd), handler_(std::move(handler)), tick_(std::move(tick)) {
  wake_[0] = wake[0];
  wake_[1] = wake[1];
  thread_ = std::thread([this] {
    name_this_thread("ks-control");
    serve();
  });
}

ControlServer::~ControlServer() { stop(); }

void ControlServer::stop() {
  if (!thread_.joinable()) return;
  if (wake_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
  }
  thread_.join();
  ::close(fd_);
  ::unlink(path_.c_str());
  for (int& end : wake_) {
    if (end >= 0) ::close(end);
    end = -1;
  }
}

void ControlServer::serve() {
  while (true) {
    std::int64_t wait_ns = tick_ ? tick_() : -1;
    const int timeout_ms = wait_ns < 0 ? -1 : static_cast<int>(std::min<std::int64_t>(wait_ns / 1'000'000 + 1, 60'000));
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    const int ready = ::poll(fds, wake_[0] >= 0 ? 2 : 1, timeout_ms);
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;  // a deadline: tick_ runs at the top of the loop
    if (wake_[0] >= 0 && (fds[1].revents & POLLIN)) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    // A client that connects and says nothing must not hold the program's control forever.
    auto line = read_line(client, std::chrono::steady_clock::now() + std::chrono::seconds(2));
    std::string reply;
    if (!line) {
      reply = "error " + line.error().message;
    } else if (auto request = parse_control_request(*line); !request) {
      reply = "error " + request.error().message;
    } else {
      reply = handler_(*request);
    }
    write_all(client, reply + "\n");
    ::close(client);
  }
}

Result<std::string> send_control_request(const std::string& path, const ControlRequest& request, std::chrono::milliseconds timeout) {
  sockaddr_un address{};
  if (!fill_address(path, address)) return make_error(ErrorCode::kInvalidArgument, "socket path too long: " + path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(ErrorCode::kIo, std::string("cannot create a socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int why = errno;
    ::close(fd);
    if (why == ENOENT || why == ECONNREFUSED) return make_error(ErrorCode::kNotFound, "the process is gone (no one listens on " + path + ")");
    return make_error(ErrorCode::kIo, "cannot connect to " + path + ": " + std::strerror(why));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!write_all(fd, format_control_request(request) + "\n")) {
    ::close(fd);
    return make_error(ErrorCode::kIo, "cannot send to " + path);
  }
  auto reply = read_line(fd, deadline);
  ::close(fd);
  return reply;
}

}  // namespace kernscope::tracer
