#include "tracer/config/tracer_config.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace kernscope::tracer {
namespace {

Result<double> number(const char* name, const char* text) {
  double v = 0;
  const std::string s = text;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
    return make_error(ErrorCode::kInvalidArgument, std::string(name) + "='" + s + "' is not a non-negative number");
  }
  return v;
}

// A whole number >= 1 (steps).
Result<std::int64_t> whole_number(const char* name, const char* text) {
  std::int64_t v = 0;
  const std::string s = text;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1) {
    return make_error(ErrorCode::kInvalidArgument, std::string(name) + "='" + s + "' is not a whole number of at least 1");
  }
  return v;
}

// Live capture's variables, checked together: the modes exclude each other.
Result<void> live_settings(const std::function<const char*(const char*)>& getenv, TracerConfig& c) {
  CaptureSettings& l = c.live;
  if (const char* v = getenv(env::kPaused); v && *v) {
    const std::string on = v;
    if (on != "0" && on != "1") return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_PAUSED='" + on + "' (0 or 1)");
    l.paused = on == "1";
  }
  for (auto [name, slot] : {std::pair{env::kEveryS, &l.every_ns}, std::pair{env::kForS, &l.for_ns}}) {
    if (const char* v = getenv(name); v && *v) {
      auto n = number(name, v);
      if (!n) return std::unexpected(n.error());
      *slot = static_cast<Ns>(*n * 1e9);
    }
  }
  for (auto [name, slot] : {std::pair{env::kEverySteps, &l.every_steps}, std::pair{env::kSteps, &l.steps},
                            std::pair{env::kKeepLastSteps, &l.keep_last_steps}}) {
    if (const char* v = getenv(name); v && *v && std::string(v) != "0") {
      auto n = whole_number(name, v);
      if (!n) return std::unexpected(n.error());
      *slot = *n;
    }
  }
  if (const char* v = getenv(env::kWhen); v && *v) {
    auto when = parse_tail_condition(v);
    if (!when) return make_error(ErrorCode::kInvalidArgument, std::string(env::kWhen) + ": " + when.error().message);
    l.when_factor = when->first;
    l.when_ns = when->second;
  }
  if (const char* v = getenv(env::kSession); v && *v) c.session = v;
  if (const char* v = getenv(env::kStepRange); v && *v) c.step_range = v;
  if (const char* v = getenv(env::kPausedDetach); v && *v) {
    const std::string on = v;
    if (on != "0" && on != "1") return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_PAUSED_DETACH='" + on + "' (0 or 1)");
    c.paused_detach = on == "1";
  }
  if (const char* v = getenv(env::kTailMb); v && *v) {
    auto n = number(env::kTailMb, v);
    if (!n || *n < 1) return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_TAIL_MB must be at least 1");
    c.tail_bytes = static_cast<std::size_t>(*n) << 20;
  }
  if ((l.every_ns > 0) != (l.for_ns > 0)) return make_error(ErrorCode::kInvalidArgument, "--every and --for go together");
  if (l.every_ns > 0 && l.for_ns >= l.every_ns) return make_error(ErrorCode::kInvalidArgument, "--for must be shorter than --every");
  if ((l.every_steps > 0) != (l.steps > 0)) return make_error(ErrorCode::kInvalidArgument, "--every-steps and --steps go together");
  if (l.every_steps > 0 && l.steps >= l.every_steps) {
    return make_error(ErrorCode::kInvalidArgument, "--steps must be fewer than --every-steps");
  }
  if ((l.keep_last_steps > 0) != (l.when_factor > 0 || l.when_ns > 0)) {
    return make_error(ErrorCode::kInvalidArgument, "--keep-last-steps and --when go together");
  }
  const int modes = (l.every_ns > 0) + (l.every_steps > 0) + (l.keep_last_steps > 0);
  if (modes > 1) return make_error(ErrorCode::kInvalidArgument, "--every, --every-steps and --keep-last-steps exclude each other");
  if (l.keep_last_steps > 0 && l.paused) return make_error(ErrorCode::kInvalidArgument, "--keep-last-steps records all along: it cannot be --paused");
  if (l.live() && (c.capture != TracerConfig::Capture::kAll || c.delay_s > 0 || c.duration_s > 0)) {
    return make_error(ErrorCode::kInvalidArgument, "live capture (--paused, --every, --every-steps, --keep-last-steps) replaces "
                                                   "--capture-range, --delay and --duration");
  }
  if ((l.every_steps > 0 || l.keep_last_steps > 0) && c.step_range.empty()) c.step_range = "auto";
  return {};
}

}  // namespace

std::string CaptureSettings::describe() const {
  auto seconds = [](Ns ns) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", static_cast<double>(ns) / 1e9);
    return std::string(text);
  };
  auto factor_text = [this] {
    char text[32];
    std::snprintf(text, sizeof text, "%g", when_factor);
    return std::string(text);
  };
  if (every_ns > 0) return "sampled: " + seconds(for_ns) + " every " + seconds(every_ns);
  if (every_steps > 0) return "sampled: " + std::to_string(steps) + " steps every " + std::to_string(every_steps) + " steps";
  if (keep_last_steps > 0) {
    return "tail: the last " + std::to_string(keep_last_steps) + " steps written when a step takes more than " +
           (when_ns > 0 ? seconds(when_ns) : factor_text() + "x the median step");
  }
  if (paused) return "paused: windows on request (kernscope capture)";
  return "whole run";
}

Result<std::pair<double, Ns>> parse_tail_condition(std::string_view text) {
  std::string t;
  for (char ch : text) {
    if (ch != ' ') t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (t.starts_with("step>")) t = t.substr(5);
  const auto bad = [&] {
    return make_error(ErrorCode::kInvalidArgument, "'" + std::string(text) + "' (expected 'step > Fx p50', e.g. 2x p50, or 'step > T' with T in s, ms or us)");
  };
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || !(v > 0)) return bad();
  const std::string unit(end, static_cast<const char*>(t.data() + t.size()));
  if (unit == "xp50" || unit == "x") {
    if (v <= 1) return make_error(ErrorCode::kInvalidArgument, "'" + std::string(text) + "': the factor must be above 1");
    return std::pair{v, Ns{0}};
  }
  if (unit == "s") return std::pair{0.0, static_cast<Ns>(v * 1e9)};
  if (unit == "ms") return std::pair{0.0, static_cast<Ns>(v * 1e6)};
  if (unit == "us") return std::pair{0.0, static_cast<Ns>(v * 1e3)};
  return bad();
}

Result<std::pair<bool, int>> parse_capture_end(const std::string& text) {
  if (text == "stop") return std::pair{false, 1};
  if (text == "repeat") return std::pair{true, 0};
  if (text.rfind("repeat:", 0) == 0) {
    int n = 0;
    const std::string count = text.substr(7);
    auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec == std::errc() && end == count.data() + count.size() && n > 0) return std::pair{true, n};
  }
  return make_error(ErrorCode::kInvalidArgument, "capture range end '" + text + "' (expected stop, repeat or repeat:N)");
}

Result<TracerConfig> config_from_env(const std::function<const char*(const char*)>& getenv) {
  TracerConfig c;
  if (const char* v = getenv(env::kOutput); v && *v) c.output = v;
  if (const char* v = getenv(env::kApi); v && *v) {
    const std::string api = v;
    if (api != "all" && api != "default") return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_API='" + api + "' (all or default)");
    c.api_all = api == "all";
  }
  if (const char* v = getenv(env::kCudaGraphTrace); v && *v) {
    const std::string mode = v;
    if (mode != "node" && mode != "graph") {
      return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_CUDA_GRAPH_TRACE='" + mode + "' (node or graph)");
    }
    c.graph_nodes = mode == "node";
  }
  if (const char* v = getenv(env::kNvmlIntervalMs); v && *v) {
    auto n = number(env::kNvmlIntervalMs, v);
    if (!n) return std::unexpected(n.error());
    c.nvml_interval_ms = static_cast<int>(*n);
  }
  if (const char* v = getenv(env::kNvmlPcie); v && *v) c.nvml_pcie = std::string(v) == "1";
  if (const char* v = getenv(env::kThreadCpuUs); v && *v) {
    auto n = number(env::kThreadCpuUs, v);
    if (!n) return std::unexpected(n.error());
    c.thread_cpu_interval_us = static_cast<int>(*n);
  }
  if (const char* v = getenv(env::kHwTrace); v && *v) {
    const std::string on = v;
    if (on != "0" && on != "1") return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_HW_TRACE='" + on + "' (0 or 1)");
    c.hw_trace = on == "1";
  }
  if (const char* v = getenv(env::kCaptureRange); v && *v) {
    const std::string range = v;
    if (range == "cudaProfilerApi") {
      c.capture = TracerConfig::Capture::kProfilerApi;
    } else if (range.rfind("nvtx:", 0) == 0 && range.size() > 5) {
      // nvtx:NAME[@DOMAIN]; the last '@' splits, so names may hold '@' when a domain is given.
      c.capture = TracerConfig::Capture::kNvtx;
      const std::string spec = range.substr(5);
      const std::size_t at = spec.rfind('@');
      c.nvtx_range = at == std::string::npos ? spec : spec.substr(0, at);
      c.nvtx_domain = at == std::string::npos ? "" : spec.substr(at + 1);
      if (c.nvtx_range.empty()) return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_CAPTURE_RANGE='" + range + "': empty range name");
    } else if (range != "none") {
      return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_CAPTURE_RANGE='" + range + "' (none, cudaProfilerApi or nvtx:NAME[@DOMAIN])");
    }
  }
  if (const char* v = getenv(env::kCaptureRangeEnd); v && *v) {
    auto end = parse_capture_end(v);
    if (!end) return std::unexpected(end.error());
    c.capture_repeat = end->first;
    c.capture_ranges = end->second;
  }
  for (auto [name, slot] : {std::pair{env::kDelayS, &c.delay_s}, std::pair{env::kDurationS, &c.duration_s}}) {
    if (const char* v = getenv(name); v && *v) {
      auto n = number(name, v);
      if (!n) return std::unexpected(n.error());
      *slot = *n;
    }
  }
  if (const char* v = getenv(env::kBufferMb); v && *v) {
    auto n = number(env::kBufferMb, v);
    if (!n || *n < 1) return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_BUFFER_MB must be at least 1");
    c.buffer_bytes = static_cast<std::size_t>(*n) << 20;
  }
  if (const char* v = getenv(env::kBuffers); v && *v) {
    auto n = number(env::kBuffers, v);
    if (!n || *n < 2) return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_BUFFERS must be at least 2");
    c.buffers = static_cast<std::size_t>(*n);
  }
  if (const char* v = getenv(env::kFlushMs); v && *v) {
    auto n = number(env::kFlushMs, v);
    if (!n || *n < 0) return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_FLUSH_MS must be 0 (only full buffers) or more");
    c.flush_ms = static_cast<int>(*n);
  }
  if (const char* v = getenv(env::kFileList); v && *v) c.file_list = v;
  if (auto live = live_settings(getenv, c); !live) return std::unexpected(live.error());
  if (const char* v = getenv(env::kSample); v && *v) {
    auto hz = parse_sample_rate(v);
    if (!hz) return make_error(ErrorCode::kInvalidArgument, std::string(env::kSample) + ": " + hz.error().message);
    c.sample_hz = *hz;
  }
  if (const char* v = getenv(env::kRecord); v && *v) {
    const std::string list = v;
    std::size_t begin = 0;
    while (begin <= list.size()) {
      std::size_t end = list.find(',', begin);
      if (end == std::string::npos) end = list.size();
      const std::string kind = list.substr(begin, end - begin);
      if (kind == "all") {
        for (const auto k : kRecordKinds) c.record.emplace(k);
        begin = end + 1;
        continue;
      }
      if (std::find(kRecordKinds.begin(), kRecordKinds.end(), kind) == kRecordKinds.end()) {
        std::string known = "all";
        for (auto k : kRecordKinds) known += ", " + std::string(k);
        return make_error(ErrorCode::kInvalidArgument, "KERNSCOPE_RECORD: unknown kind '" + kind + "' (" + known + ")");
      }
      c.record.insert(kind);
      begin = end + 1;
    }
  }
  return c;
}

Result<double> parse_sample_rate(std::string_view text) {
  if (text.empty() || text == "none") return 0.0;
  const std::string rate = text == "cpu" ? "100" : text.starts_with("cpu:") ? std::string(text.substr(4)) : "";
  char* end = nullptr;
  const double hz = rate.empty() ? 0 : std::strtod(rate.c_str(), &end);
  if (rate.empty() || *end != '\0' || !(hz >= 1 && hz <= 1000)) {
    std::string why = "'";  // built by appending: GCC 12 warns (-Wrestrict) on "'" + std::string(...)
    why.append(text).append("' is not none, cpu or cpu:HZ with HZ in 1..1000");
    return make_error(ErrorCode::kInvalidArgument, why);
  }
  return hz;
}

std::string expand_output_path(const std::string& pattern, std::int64_t pid, const std::string& host,
                               const std::function<const char*(const char*)>& getenv,
                               const std::function<bool(const std::string&)>& exists) {
  auto expand = [&](int sequence) {
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != '%' || i + 1 == pattern.size()) {
        out += pattern[i];
        continue;
      }
      const char c = pattern[++i];
      if (c == 'p') out += std::to_string(pid);
      else if (c == 'h') out += host;
      else if (c == 'n') out += std::to_string(sequence);
      else if (c == '%') out += '%';
      else if (c == 'q' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
        const std::size_t close = pattern.find('}', i + 2);
        if (close == std::string::npos) {
          out += "%q";
          continue;
        }
        const std::string name = pattern.substr(i + 2, close - i - 2);
        if (const char* v = getenv(name.c_str())) out += v;
        i = close;
      } else {
        out += '%';
        out += c;
      }
    }
    return out;
  };
  if (pattern.find("%n") == std::string::npos) return expand(1);
  for (int n = 1;; ++n) {
    std::string path = expand(n);
    if (!exists(path) || n > 100000) return path;
  }
}

DetachChoice choose_paused_detach(const TracerConfig& c) {
  if (!c.live.live() || c.live.tail()) return {false, "records all along"};
  if (!c.step_range.empty()) return {false, "attached: steps are watched through CUPTI's NVTX callbacks (--step-range, --every-steps)"};
  if (!c.graph_nodes) return {false, "attached: --cuda-graph-trace graph keeps whole-graph records on for the whole run"};
  if (c.hw_trace) return {false, "attached: --hw-trace is set when the first context is created"};
  if (!c.paused_detach) return {false, "attached: --between-windows attached (KERNSCOPE_PAUSED_DETACH=0)"};
  return {true, "detached between windows"};
}

}  // namespace kernscope::tracer
