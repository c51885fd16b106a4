// kernscope capture start|stop|status|window [SESSION|PID] [--duration 2s | --steps 20]: opens and
// closes recording windows in the processes of a `kernscope record --paused` launch (live capture),
// through each process's control socket (tracer/config/control_channel.hpp). A session
// names every process of one launch; a pid names one process of any session.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "tracer/config/control_channel.hpp"

namespace kernscope::cli {
namespace {

struct CaptureOptions {
  std::string action;
  std::string target;
  std::string duration;
  std::int64_t steps = 0;
};

const char* env(const char* name) { return std::getenv(name); }

// "2s", "500ms", "1.5" (seconds) -> seconds.
Result<double> parse_duration(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string unit(end, text.data() + text.size());
  if (ec != std::errc() || !(v > 0) || (unit != "" && unit != "s" && unit != "ms")) {
    return make_error(ErrorCode::kInvalidArgument, "capture: --duration must be a positive time such as 2s or 500ms, not '" + text + "'");
  }
  return unit == "ms" ? v / 1000 : v;
}

std::vector<std::string> sessions() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(tracer::sessions_root(env), ec)) {
    if (entry.is_directory(ec) && !tracer::session_pids(entry.path().string()).empty()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The sockets a target names: a session's every process, or one process by pid.
Result<std::vector<std::string>> sockets_of(const std::string& target) {
  const std::string root = tracer::sessions_root(env);
  std::string session = target;
  if (session.empty()) {
    const auto all = sessions();
    if (all.empty()) {
      return make_error(ErrorCode::kNotFound, "capture: no live capture session in " + root +
                                                  " (start one with kernscope record --paused -- CMD)");
    }
    if (all.size() > 1) {
      std::string list;
      for (const auto& s : all) list += (list.empty() ? "" : ", ") + s;
      return make_error(ErrorCode::kInvalidArgument, "capture: several sessions (" + list + "): name one, or a pid");
    }
    session = all.front();
  }
  std::vector<std::string> paths;
  const std::string dir = root + "/" + session;
  std::error_code ec;
  if (session.find('/') == std::string::npos && std::filesystem::is_directory(dir, ec)) {
    for (const auto pid : tracer::session_pids(dir)) paths.push_back(tracer::control_socket_path(dir, pid));
    if (paths.empty()) return make_error(ErrorCode::kNotFound, "capture: session " + session + " has no traced process left");
    return paths;
  }
  // A pid: its socket in whichever session holds it.
  std::int64_t pid = 0;
  const auto [end, parse] = std::from_chars(target.data(), target.data() + target.size(), pid);
  if (parse == std::errc() && end == target.data() + target.size() && pid > 0) {
    for (const auto& s : sessions()) {
      const std::string path = tracer::control_socket_path(root + "/" + s, pid);
      if (std::filesystem::exists(path, ec)) return std::vector<std::string>{path};
    }
    return make_error(ErrorCode::kNotFound, "capture: no traced process " + target +
                                                " (it is gone, or was not started by kernscope record --paused/--every/--keep-last-steps)");
  }
  return make_error(ErrorCode::kNotFound, "capture: no session or traced process named '" + target + "' in " + root);
}

int run_capture(const CaptureOptions& o) {
  tracer::ControlRequest request;
  if (o.action == "start") request.kind = tracer::ControlRequest::Kind::kStart;
  else if (o.action == "stop") request.kind = tracer::ControlRequest::Kind::kStop;
  else if (o.action == "status") request.kind = tracer::ControlRequest::Kind::kStatus;
  else if (o.action == "window") request.kind = tracer::ControlRequest::Kind::kWindow;
  else return fail(Error{ErrorCode::kInvalidArgument, "capture: the action must be start, stop, status or window, not '" + o.action + "'"});
  if (request.kind == tracer::ControlRequest::Kind::kWindow) {
    if (o.duration.empty() == (o.steps <= 0)) {
      return fail(Error{ErrorCode::kInvalidArgument, "capture window: give --duration (e.g. 2s) or --steps N, one of them"});
    }
    if (!o.duration.empty()) {
      auto seconds = parse_duration(o.duration);
      if (!seconds) return fail(seconds.error());
      request.duration_s = *seconds;
    }
    request.steps = o.steps;
  } else if (!o.duration.empty() || o.steps != 0) {
    return fail(Error{ErrorCode::kInvalidArgument, "capture: --duration and --steps go with window"});
  }
  auto paths = sockets_of(o.target);
  if (!paths) return fail(paths.error());
  int answered = 0;
  for (const auto& path : *paths) {
    const std::string pid = std::filesystem::path(path).stem().string();
    auto reply = tracer::send_control_request(path, request, std::chrono::seconds(5));
    if (!reply) {
      if (reply.error().code == ErrorCode::kNotFound) {
        std::error_code ec;
        std::filesystem::remove(path, ec);  // a killed process's socket: said once, then gone
        std::cerr << "kernscope: capture: pid " << pid << " is gone\n";
      } else {
        std::cerr << "kernscope: capture: pid " << pid << ": " << reply.error().message << "\n";
      }
      continue;
    }
    const bool ok = reply->rfind("ok ", 0) == 0;
    answered += ok;
    (ok ? std::cout : std::cerr) << (ok ? reply->substr(3) : "kernscope: capture: " + reply->substr(reply->find(' ') + 1)) << "\n";
  }
  return answered > 0 ? 0 : kExitBadInput;
}

}  // namespace

Command add_capture(CLI::App& app) {
  auto o = std::make_shared<CaptureOptions>();
  auto* cmd = app.add_subcommand("capture",
                                 "Open and close recording windows of a live capture (kernscope record --paused ...): "
                                 "kernscope capture start|stop|status|window [SESSION|PID]");
  cmd->add_option("action", o->action, "start, stop, status or window")->required();
  cmd->add_option("target", o->target, "the session (record prints it; default: the only one) or one process's pid");
  cmd->add_option("--duration", o->duration, "window: how long it records (2s, 500ms)");
  cmd->add_option("--steps", o->steps, "window: how many whole steps it records (the process must watch steps: --step-range)");
  return [o] { return run_capture(*o); };
}

}  // namespace kernscope::cli
