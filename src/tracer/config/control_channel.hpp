// The channel between `kernscope capture` and the traced processes of `kernscope record --paused`
// (live capture): each traced process listens on a Unix socket named after its pid in its
// session's folder; `capture` sends one request line and reads one reply line. A socket costs the
// program nothing while nobody talks to it (one thread blocked in poll), works for every process of
// a launch (workers included: they inherit the session through the environment) and, unlike a
// signal, carries arguments and an answer, so `capture start` returns only once recording is on.
//
// Requests (one line):   start | stop | window duration=SECONDS | window steps=N | status
// Replies (one line):    "ok ..." or "error ..."
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kernscope/error.hpp"

namespace kernscope::tracer {

struct ControlRequest {
  enum class Kind { kStart, kStop, kWindow, kStatus } kind = Kind::kStatus;
  double duration_s = 0;    // window duration=S
  std::int64_t steps = 0;   // window steps=N
};

// "start", "window duration=2.5", ... -> the request; errors say what is accepted.
Result<ControlRequest> parse_control_request(std::string_view line);
std::string format_control_request(const ControlRequest& request);

// A session's name: letters, digits, '.', '_' and '-' (at most 64), never "." or "..": it names a
// folder that `record` removes when the launch ends.
Result<void> check_session_name(std::string_view name);
// Creates a folder (and its parents) mode 0700, or checks that the one there is this user's own
// folder and not a link.
Result<void> make_private_folder(const std::string& dir);
// The longest socket path a Unix socket takes (sun_path, with its terminating NUL).
inline constexpr std::size_t kMaxSocketPath = 107;

// The folder of session `name`: $KERNSCOPE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/kernscope, else
// /tmp/kernscope-UID, then the session's name. `getenv` is injected for tests.
std::string session_dir(const std::string& name, const std::function<const char*(const char*)>& getenv);
// The folder holding every session (session_dir without the name).
std::string sessions_root(const std::function<const char*(const char*)>& getenv);
// A traced process's socket in a session folder.
std::string control_socket_path(const std::string& dir, std::int64_t pid);

// One listening socket and the thread that answers it. The handler runs on that thread, one request
// at a time; `tick` (optional) runs there too, whenever the deadline it returns passes (the timer of
// timed windows), so one thread serves both.
class ControlServer {
 public:
  using Handler = std::function<std::string(const ControlRequest&)>;
  // Returns the nanoseconds to wait before the next tick, or a negative number for no deadline.
  using Tick = std::function<std::int64_t()>;
  // Creates the folder (0700) and the socket; error when it cannot listen there.
  static Result<std::unique_ptr<ControlServer>> listen(const std::string& path, Handler handler, Tick tick = {});
  ~ControlServer();  // stops the thread, closes and removes the socket
  const std::string& path() const { return path_; }
  // Ends the thread and removes the socket now (also on destruction).
  void stop();

 private:
  ControlServer(std::string path, int fd, const int wake[2], Handler handler, Tick tick);
  void serve();
  std::string path_;
  int fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: stop() writes to end the poll
  Handler handler_;
  Tick tick_;
  std::thread thread_;
};

// Sends one request to the socket at `path` and returns the reply line. Errors: the process is gone
// (no socket, or nobody listening: kNotFound), no reply within `timeout` (kIo).
Result<std::string> send_control_request(const std::string& path, const ControlRequest& request,
                                         std::chrono::milliseconds timeout);

// The pids with a socket in a session folder, ascending.
std::vector<std::int64_t> session_pids(const std::string& dir);

}  // namespace kernscope::tracer
