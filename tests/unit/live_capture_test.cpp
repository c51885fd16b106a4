// Live capture (issue 30) without a GPU: the schedule, tail trigger and held records on their own;
// the control socket with real sockets; and LiveCapture driving a simulated program — a step loop
// whose launches are recorded only while recording is on, written by the tracer's real SQLite writer
// and read back by kernscope's reader and `steps` — so the windows hold exactly the kernels launched
// inside them, steps cut by a window's edge are left out as partial, and tail capture writes exactly
// the last N steps when a step is slow.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "kernscope/steps.hpp"
#include "tracer/capture_schedule.hpp"
#include "tracer/config/control_channel.hpp"
#include "tracer/config/tracer_config.hpp"
#include "tracer/live_capture.hpp"
#include "tracer/trace_db_writer.hpp"

namespace kernscope::tracer {
namespace {

constexpr Ns kMs = 1'000'000;

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/kernscope-live-XXXXXX";
    path_ = ::mkdtemp(name);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<bool> opens(const std::vector<CaptureSwitch>& switches) {
  std::vector<bool> out;
  for (const auto& s : switches) out.push_back(s.open);
  return out;
}

TEST(CaptureSchedule, StartStopAndTimedWindowsFromRequests) {
  CaptureSettings settings;
  settings.paused = true;
  CaptureSchedule schedule(settings, false, 0);
  std::vector<CaptureSwitch> sw;
  EXPECT_FALSE(schedule.recording());
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kStop}, 1, sw), "ok not recording");
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kStart}, 2, sw), "ok recording (window 1)");
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kStart}, 3, sw), "ok already recording (window 1)");
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kStop}, 4, sw), "ok stopped (window 1)");
  EXPECT_EQ(opens(sw), (std::vector<bool>{true, false}));
  sw.clear();
  ControlRequest window{ControlRequest::Kind::kWindow, 0.5, 0};
  EXPECT_EQ(schedule.request(window, 10 * kMs, sw), "ok recording for 0.5 s (window 2)");
  EXPECT_EQ(schedule.next_deadline(), 510 * kMs);
  EXPECT_EQ(schedule.request(window, 20 * kMs, sw).rfind("error a window is open", 0), 0u);
  schedule.tick(509 * kMs, sw);
  EXPECT_TRUE(schedule.recording());
  schedule.tick(510 * kMs, sw);
  EXPECT_FALSE(schedule.recording());
  EXPECT_EQ(opens(sw), (std::vector<bool>{true, false}));
  EXPECT_EQ(sw.back().why, "window time over");
  EXPECT_FALSE(schedule.next_deadline().has_value());
  // Steps are not watched: a window of steps is refused with what to do.
  EXPECT_NE(schedule.request({ControlRequest::Kind::kWindow, 0, 5}, 600 * kMs, sw).find("--step-range"), std::string::npos);
}

TEST(CaptureSchedule, StepWindowsOpenBetweenStepsAndHoldWholeSteps) {
  CaptureSettings settings;
  settings.paused = true;
  CaptureSchedule schedule(settings, true, 0);
  std::vector<CaptureSwitch> sw;
  schedule.step_started(1, sw);
  // Asked during a step: opens at that step's end, closes at the start of the step after 3 more.
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kWindow, 0, 3}, 2, sw),
            "ok recording 3 steps from the end of the current step (window 1)");
  EXPECT_FALSE(schedule.recording());
  schedule.step_ended(3, sw);
  EXPECT_TRUE(schedule.recording());
  for (int i = 0; i < 3; ++i) {
    schedule.step_started(10 + i, sw);
    EXPECT_TRUE(schedule.recording()) << i;
    schedule.step_ended(20 + i, sw);
  }
  EXPECT_TRUE(schedule.recording());  // closes before the next step runs, not at the last one's end
  schedule.step_started(30, sw);
  EXPECT_FALSE(schedule.recording());
  EXPECT_EQ(opens(sw), (std::vector<bool>{true, false}));
  EXPECT_EQ(sw.back().why, "window of 3 steps done");
  schedule.step_ended(31, sw);
  // Asked between steps: the next step is the first.
  sw.clear();
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kWindow, 0, 1}, 32, sw), "ok recording 1 steps (window 2)");
  EXPECT_TRUE(schedule.recording());
  schedule.step_started(33, sw);
  EXPECT_TRUE(schedule.recording());
  schedule.step_ended(34, sw);
  schedule.step_started(35, sw);
  EXPECT_FALSE(schedule.recording());
  EXPECT_EQ(schedule.windows_opened(), 2);
}

TEST(CaptureSchedule, StartReplacesAPendingStepWindow) {
  CaptureSettings settings;
  settings.paused = true;
  CaptureSchedule schedule(settings, true, 0);
  std::vector<CaptureSwitch> sw;
  schedule.step_started(1, sw);
  schedule.request({ControlRequest::Kind::kWindow, 0, 2}, 2, sw);  // pending until this step ends
  EXPECT_EQ(schedule.request({ControlRequest::Kind::kStart}, 3, sw), "ok recording (window 1)");
  for (int i = 0; i < 5; ++i) {
    schedule.step_ended(10 + 10 * i, sw);
    schedule.step_started(15 + 10 * i, sw);
  }
  // The start window stays open: the pending window of 2 steps did not take it over.
  EXPECT_TRUE(schedule.recording());
  EXPECT_EQ(opens(sw), (std::vector<bool>{true}));
  EXPECT_EQ(sw.front().why, "capture start");
}

TEST(WindowLog, FindsTheWindowOfATimeAndWritesEachWindowOpenThenClosed) {
  WindowLog log(true);
  for (int w = 0; w < 1000; ++w) {
    log.opened(w * 100, "every 100");
    log.closed(w * 100 + 10, "time over");
  }
  EXPECT_TRUE(log.contains(0));
  EXPECT_TRUE(log.contains(50'009));
  EXPECT_FALSE(log.contains(50'010));
  EXPECT_FALSE(log.contains(-1));
  EXPECT_FALSE(log.contains(99'950));
  log.opened(100'000, "start");
  EXPECT_TRUE(log.contains(1'000'000));  // open: until closed
  const auto rows = log.take_rows();
  ASSERT_EQ(rows.size(), 2001u);
  EXPECT_EQ(rows[0].end, -1);
  EXPECT_EQ(rows[1].end, 10);
  EXPECT_EQ(rows[1].closed_by, "time over");
  EXPECT_EQ(rows.back().id, 1001);
}

TEST(ControlChannel, SessionNamesAndFoldersThatAreSafeToRemove) {
  for (const char* good : {"1234", "srv", "a.b_c-d"}) EXPECT_TRUE(check_session_name(good).has_value()) << good;
  for (const char* bad : {"", ".", "..", "../x", "a/b", "x y", "$HOME"}) EXPECT_FALSE(check_session_name(bad).has_value()) << bad;
  TempDir dir;
  const std::string target = dir.path() + "/elsewhere";
  std::filesystem::create_directory(target);
  std::filesystem::create_symlink(target, dir.path() + "/link");
  EXPECT_FALSE(make_private_folder(dir.path() + "/link").has_value());  // a link is not used
  ASSERT_TRUE(make_private_folder(dir.path() + "/a/b").has_value());
  EXPECT_EQ(std::filesystem::status(dir.path() + "/a/b").permissions() & std::filesystem::perms::all, std::filesystem::perms::owner_all);
}

TEST(CaptureSchedule, SamplesByStepsAndByTime) {
  CaptureSettings by_steps;
  by_steps.every_steps = 5;
  by_steps.steps = 2;
  CaptureSchedule steps(by_steps, true, 0);
  std::vector<CaptureSwitch> sw;
  std::vector<int> recorded;  // the steps that ran inside a window
  for (int i = 1; i <= 20; ++i) {
    steps.step_started(i * 10, sw);
    if (steps.recording()) recorded.push_back(i);
    steps.step_ended(i * 10 + 5, sw);
  }
  // Windows open at the ends of steps 5, 10, 15, 20 and hold the 2 steps after each.
  EXPECT_EQ(recorded, (std::vector<int>{6, 7, 11, 12, 16, 17}));
  EXPECT_EQ(steps.windows_opened(), 4);

  CaptureSettings by_time;
  by_time.every_ns = 1000 * kMs;
  by_time.for_ns = 100 * kMs;
  CaptureSchedule timed(by_time, false, 0);
  sw.clear();
  EXPECT_EQ(timed.next_deadline(), 1000 * kMs);  // set-up is not sampled
  std::int64_t recording_ms = 0;
  for (Ns t = 0; t <= 3500 * kMs; t += kMs) {
    timed.tick(t, sw);
    recording_ms += timed.recording();
  }
  EXPECT_EQ(timed.windows_opened(), 3);
  EXPECT_EQ(recording_ms, 300);  // 3 windows of 100 ms
  // A window a request opened is not stacked on by the sample that falls inside it.
  CaptureSchedule busy(by_time, false, 0);
  sw.clear();
  busy.request({ControlRequest::Kind::kStart}, 900 * kMs, sw);
  busy.tick(1000 * kMs, sw);
  EXPECT_EQ(busy.windows_opened(), 1);
  EXPECT_EQ(busy.next_deadline(), 2000 * kMs);
}

TEST(TailTrigger, SlowStepAgainstTheMedianWritesTheLastNSteps) {
  TailTrigger tail(3, 2.0, 0);
  Ns t = 0;
  std::optional<Ns> from;
  std::vector<std::pair<Ns, Ns>> steps;
  auto step = [&](Ns length) {
    tail.step_started(t);
    steps.emplace_back(t, t + length);
    t += length;
    from = tail.step_ended(t);
    t += 1 * kMs;  // the gap between steps
  };
  // Too little history: even a long step does not trigger.
  for (int i = 0; i < 3; ++i) step(10 * kMs);
  step(100 * kMs);
  EXPECT_FALSE(from.has_value());
  for (int i = 0; i < 10; ++i) step(10 * kMs);
  EXPECT_EQ(tail.median(), 10 * kMs);
  EXPECT_FALSE(from.has_value());
  step(19 * kMs);  // under 2x the median
  EXPECT_FALSE(from.has_value());
  step(25 * kMs);
  ASSERT_TRUE(from.has_value());
  // The window starts at the end of the step before the last 3 (the slow one included).
  EXPECT_EQ(*from, steps[steps.size() - 4].second);
  EXPECT_LE(tail.keep_from(), steps[steps.size() - 3].first);

  TailTrigger absolute(2, 0, 50 * kMs);
  absolute.step_started(0);
  EXPECT_FALSE(absolute.step_ended(40 * kMs).has_value());
  absolute.step_started(41 * kMs);
  EXPECT_EQ(absolute.step_ended(100 * kMs), 0);  // fewer steps than asked: from the first one's start
  // An end without its start (tracing began inside a step) is ignored.
  EXPECT_FALSE(absolute.step_ended(200 * kMs).has_value());
}

TEST(HeldRecords, TakesAWindowDropsTheOldAndStaysBounded) {
  HeldRecords held(std::size_t{1} << 20);
  RecordBatch batch;
  for (int i = 0; i < 100; ++i) {
    KernelRow k;
    k.start = i * 10;
    k.end = k.start + 5;
    batch.kernels.push_back(k);
    GpuSampleRow g;
    g.timestamp = i * 10;
    batch.samples.push_back(g);
  }
  held.add(batch);
  EXPECT_TRUE(batch.kernels.empty());
  held.drop_before(200);
  RecordBatch window = held.take(300, 500);
  ASSERT_EQ(window.kernels.size(), 20u);
  EXPECT_EQ(window.kernels.front().start, 300);
  EXPECT_EQ(window.samples.size(), 20u);
  // What is before the window's end is gone with it; later rows stay held.
  RecordBatch rest = held.take(0, 10'000);
  EXPECT_EQ(rest.kernels.size(), 50u);
  EXPECT_EQ(rest.kernels.front().start, 500);
  EXPECT_EQ(held.overflow_rows(), 0);

  HeldRecords small(100 * sizeof(KernelRow));
  for (int i = 0; i < 400; ++i) {
    KernelRow k;
    k.start = i;
    batch.kernels.push_back(k);
  }
  small.add(batch);
  EXPECT_LE(small.bytes(), 100 * sizeof(KernelRow));
  EXPECT_GT(small.overflow_rows(), 0);
  EXPECT_GT(small.complete_from(), 0);
  RecordBatch kept = small.take(0, 1000);
  EXPECT_EQ(static_cast<std::int64_t>(kept.kernels.size()) + small.overflow_rows(), 400);
  EXPECT_GE(kept.kernels.front().start, small.complete_from());
}

TEST(TracerConfig, LiveCaptureSettingsAndTheirConflicts) {
  auto config = [](std::map<std::string, std::string> vars) {
    return config_from_env([&vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  auto paused = config({{"KERNSCOPE_PAUSED", "1"}, {"KERNSCOPE_SESSION", "s1"}});
  ASSERT_TRUE(paused.has_value()) << paused.error().message;
  EXPECT_TRUE(paused->live.paused);
  EXPECT_EQ(paused->live.describe(), "paused: windows on request (kernscope capture)");
  EXPECT_TRUE(paused->step_range.empty());
  auto tail = config({{"KERNSCOPE_KEEP_LAST_STEPS", "20"}, {"KERNSCOPE_WHEN", "step > 2x p50"}});
  ASSERT_TRUE(tail.has_value()) << tail.error().message;
  EXPECT_EQ(tail->live.when_factor, 2.0);
  EXPECT_EQ(tail->step_range, "auto");  // steps are needed: engines' step names by default
  EXPECT_EQ(tail->live.describe(), "tail: the last 20 steps written when a step takes more than 2x the median step");
  auto sampled = config({{"KERNSCOPE_EVERY_S", "60"}, {"KERNSCOPE_FOR_S", "1"}});
  ASSERT_TRUE(sampled.has_value());
  EXPECT_EQ(sampled->live.describe(), "sampled: 1 s every 60 s");
  EXPECT_EQ(parse_tail_condition("50ms").value(), (std::pair<double, Ns>{0.0, 50 * kMs}));
  EXPECT_EQ(parse_tail_condition("step>0.2s").value().second, 200 * kMs);
  for (const auto& bad : std::vector<std::map<std::string, std::string>>{
           {{"KERNSCOPE_EVERY_S", "60"}},                                    // --every without --for
           {{"KERNSCOPE_EVERY_S", "1"}, {"KERNSCOPE_FOR_S", "2"}},           // --for longer than --every
           {{"KERNSCOPE_EVERY_STEPS", "10"}, {"KERNSCOPE_STEPS", "10"}},     // windows that never close
           {{"KERNSCOPE_KEEP_LAST_STEPS", "5"}},                             // no trigger
           {{"KERNSCOPE_KEEP_LAST_STEPS", "5"}, {"KERNSCOPE_WHEN", "1x p50"}},
           {{"KERNSCOPE_KEEP_LAST_STEPS", "5"}, {"KERNSCOPE_WHEN", "2x"}, {"KERNSCOPE_PAUSED", "1"}},
           {{"KERNSCOPE_PAUSED", "1"}, {"KERNSCOPE_CAPTURE_RANGE", "cudaProfilerApi"}},
           {{"KERNSCOPE_EVERY_S", "9"}, {"KERNSCOPE_FOR_S", "1"}, {"KERNSCOPE_EVERY_STEPS", "9"}, {"KERNSCOPE_STEPS", "1"}},
           {{"KERNSCOPE_STEPS", "-3"}}}) {
    EXPECT_FALSE(config(bad).has_value()) << bad.begin()->first;
  }
}


TEST(ControlChannel, RequestsAndRepliesOverTheSocket) {
  TempDir dir;
  const auto getenv = [&](const char* name) -> const char* {
    return std::string(name) == "KERNSCOPE_RUNTIME_DIR" ? dir.path().c_str() : nullptr;
  };
  const std::string session = session_dir("s1", getenv);
  EXPECT_EQ(session, dir.path() + "/s1");
  std::atomic<int> ticks{0};
  std::vector<std::string> seen;
  auto server = ControlServer::listen(
      control_socket_path(session, 4242),
      [&](const ControlRequest& r) {
        seen.push_back(format_control_request(r));
        return "ok " + format_control_request(r);
      },
      [&] {
        ++ticks;
        return std::int64_t{5 * kMs};
      });
  ASSERT_TRUE(server.has_value()) << server.error().message;
  EXPECT_EQ(session_pids(session), std::vector<std::int64_t>{4242});
  const auto path = control_socket_path(session, 4242);
  EXPECT_EQ(send_control_request(path, {ControlRequest::Kind::kStart}, std::chrono::seconds(2)).value(), "ok start");
  EXPECT_EQ(send_control_request(path, {ControlRequest::Kind::kWindow, 2.5, 0}, std::chrono::seconds(2)).value(),
            "ok window duration=2.500000");
  EXPECT_EQ(send_control_request(path, {ControlRequest::Kind::kWindow, 0, 20}, std::chrono::seconds(2)).value(), "ok window steps=20");
  // The timer runs on the server's thread while nobody talks: 5 ticks of 5 ms come within 60 ms on an
  // idle machine; a loaded one may take longer, so wait for them (5 s at most) rather than sleep 60 ms.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ticks.load() < 5 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(ticks.load(), 5);
  EXPECT_EQ(parse_control_request("window steps=0").has_value(), false);
  EXPECT_EQ(parse_control_request("flush").has_value(), false);
  EXPECT_EQ(parse_control_request("window duration=-1").has_value(), false);
  (*server)->stop();
  EXPECT_FALSE(std::filesystem::exists(path));
  // Nobody listens any more: the process is gone, said as such.
  auto gone = send_control_request(path, {ControlRequest::Kind::kStatus}, std::chrono::seconds(1));
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(seen.size(), 3u);
}

// A program's step loop under LiveCapture. Each step pushes its NVTX range, launches kernels and
// pops it; what the program does is recorded only while recording is on, as CUPTI would.
struct SimulatedProgram {
  StringPool strings;
  Ns clock = 1'000 * kMs;
  bool on = false;
  WindowLog windows{true};
  RecordBatch recorded;                  // what CUPTI would hand the collector
  std::optional<NvtxRow> open_step;
  std::uint32_t correlation = 0;
  std::vector<std::int64_t> kernels_per_window;  // counted by the program itself
  std::unique_ptr<LiveCapture> live;

  explicit SimulatedProgram(const TracerConfig& config) {
    LiveCapture::Hooks hooks;
    hooks.now = [this] { return clock; };
    hooks.record = [this](bool open, const std::string& why) {
      on = open;
      if (open) {
        windows.opened(clock, why);
        kernels_per_window.push_back(0);
      } else {
        windows.closed(clock, why);
      }
    };
    hooks.recording = [this] { return on; };
    live = std::make_unique<LiveCapture>(config, 4242, hooks);
  }

  void step(Ns host_ms, int kernels) {
    // The step range's own records: its start is recorded when recording is on at the push (after
    // the callback), its end when on at the pop; CUPTI pairs them only when both were.
    live->on_step(true);
    const bool start_recorded = on;
    NvtxRow row;
    row.start = clock;
    row.pid = 4242;
    row.tid = 4242;
    row.text = strings.intern("decode_step");
    for (int i = 0; i < kernels; ++i) {
      clock += 100'000;
      if (!on) continue;
      ApiRow api;
      api.start = clock;
      api.end = clock + 5'000;
      api.pid = api.tid = 4242;
      api.correlation = ++correlation;
      api.name = strings.intern("cudaLaunchKernel_v7000");
      recorded.api_calls.push_back(api);
      KernelRow k;
      k.start = clock + 20'000;
      k.end = clock + 80'000;
      k.correlation = correlation;
      k.stream = 7;
      k.context = 1;
      k.demangled = k.short_name = k.mangled = strings.intern("gemv_kernel");
      recorded.kernels.push_back(k);
      ++kernels_per_window.back();
    }
    clock += host_ms * kMs;
    if (start_recorded && on) {
      row.end = clock;
      row.end_tid = 4242;
      recorded.nvtx.push_back(row);
    }
    live->on_step(false);
    clock += 200'000;  // the host's gap before the next step
  }

  // Writes what was recorded (and the window rows) the way the collector does, then finishes.
  std::string write(const std::string& path) {
    auto writer = TraceDbWriter::create(path, 4242);
    EXPECT_TRUE(writer.has_value());
    live->finish();
    recorded.windows = windows.take_rows();
    EXPECT_TRUE((*writer)->append(recorded, strings).has_value());
    std::vector<std::pair<std::string, std::string>> info = {{"tracer", "kernscope test"}, {"run_start_ns", "0"},
                                                             {"run_end_ns", std::to_string(clock)}};
    for (auto& row : live->info()) info.push_back(row);
    EXPECT_TRUE((*writer)->finish(info, "sim", {}, strings).has_value());
    return path;
  }
};

// A paused tracer with CUPTI detached, as LiveCapture sees it: a simulated clock, and an attach of
// 7 ms (about an H200's) before a window's first record; the window rows the tracer would write.
struct AttachingTracer {
  Ns clock = 0;
  bool on = false;
  WindowLog windows{true};
  LiveCapture::Hooks hooks() {
    LiveCapture::Hooks h;
    h.now = [this] { return clock; };
    h.record = [this](bool open, const std::string& why) {
      if (open) {
        clock += 7 * kMs;  // the attach, before the first record
        windows.opened(clock, why);
      } else {
        windows.closed(clock, why);
      }
      on = open;
    };
    h.recording = [this] { return on; };
    return h;
  }
};

// A paused tracer with CUPTI detached attaches it before a window records (about 7 ms on an H200):
// a timed window still records its whole duration, from when recording began (0.293 s of 0.3 s
// before; mutation: without recording_began the close comes at 300 ms and the window is 293 ms).
TEST(LiveCapture, ATimedWindowRecordsItsWholeDurationAfterAnAttach) {
  TracerConfig config;
  config.live.paused = true;
  AttachingTracer tracer;
  tracer.clock = 1'000 * kMs;
  LiveCapture live(config, 4242, tracer.hooks());
  EXPECT_EQ(live.request({ControlRequest::Kind::kWindow, 0.3, 0}), "ok pid 4242: recording for 0.3 s (window 1)");
  tracer.clock = 1'300 * kMs;
  live.tick();
  EXPECT_TRUE(tracer.on);  // 293 ms recorded so far
  tracer.clock = 1'307 * kMs;
  live.tick();
  EXPECT_FALSE(tracer.on);
  const auto rows = tracer.windows.take_rows();  // the window as written open, then closed
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.back().id, rows.front().id);
  EXPECT_EQ(rows.back().end - rows.back().start, 300 * kMs);
  live.finish();
}

// The timer sleeps what tick() returns, from when tick() returns: a wait measured from before the
// window's attach (7 ms here) closed each sampled window that much late (0.208-0.217 s for 0.2 s on an H200).
TEST(LiveCapture, ASampledWindowClosesOnTimeAfterTheAttachThatOpenedIt) {
  TracerConfig config;
  config.live.every_ns = 1000 * kMs;
  config.live.for_ns = 200 * kMs;
  AttachingTracer tracer;
  LiveCapture live(config, 4242, tracer.hooks());
  // The timer (LiveCapture::run_timer): tick, sleep what it returned from the moment it returned, again.
  for (int i = 0; i < 7; ++i) {
    const Ns wait = live.tick();  // opens or closes a window when one is due, then the wait to the next
    ASSERT_GE(wait, 0);
    tracer.clock += wait;
  }
  const auto rows = tracer.windows.take_rows();
  ASSERT_EQ(rows.size(), 6u);  // each window written open, then closed
  for (std::size_t i = 1; i < rows.size(); i += 2) EXPECT_EQ(rows[i].end - rows[i].start, 200 * kMs) << "window " << i / 2;
  live.finish();
}

TEST(LiveCapture, EachWindowHoldsExactlyWhatTheProgramLaunchedInsideIt) {
  TempDir dir;
  TracerConfig config;
  config.live.paused = true;
  config.step_range = "decode_step";
  config.session = "t";
  SimulatedProgram program(config);
  const std::string socket = control_socket_path(dir.path() + "/t", 4242);
  ASSERT_TRUE(program.live->listen(socket).has_value());
  for (int i = 0; i < 5; ++i) program.step(2, 4);  // paused: nothing recorded
  // From another shell: a window of 3 steps, asked while the program is between steps.
  auto reply = send_control_request(socket, {ControlRequest::Kind::kWindow, 0, 3}, std::chrono::seconds(2));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, "ok pid 4242: recording 3 steps (window 1)");
  for (int i = 0; i < 6; ++i) program.step(2, 4);
  // A window by hand, closed in the middle of a step: that step is partial.
  reply = send_control_request(socket, {ControlRequest::Kind::kStart}, std::chrono::seconds(2));
  EXPECT_EQ(*reply, "ok pid 4242: recording (window 2)");
  program.step(2, 5);
  program.step(2, 5);
  program.live->on_step(true);  // step starts ...
  program.clock += kMs;
  EXPECT_EQ(send_control_request(socket, {ControlRequest::Kind::kStop}, std::chrono::seconds(2)).value(), "ok pid 4242: stopped (window 2)");
  program.live->on_step(false);  // ... and ends after the stop
  program.clock += kMs;
  for (int i = 0; i < 3; ++i) program.step(2, 4);
  EXPECT_EQ(program.kernels_per_window, (std::vector<std::int64_t>{12, 10}));

  const std::string path = program.write(dir.path() + "/live.sqlite");
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  ASSERT_EQ(trace->capture_windows.size(), 2u);
  EXPECT_EQ(trace->capture_windows[0].opened_by, "window of 3 steps");
  EXPECT_EQ(trace->capture_windows[0].closed_by, "window of 3 steps done");
  EXPECT_EQ(trace->capture_windows[1].closed_by, "capture stop");
  // Every kernel of the trace lies in the window it was launched in, as many as the program counted.
  std::vector<std::int64_t> per_window(2, 0);
  for (RowIndex i = 0; i < trace->kernels.size(); ++i) {
    for (std::size_t w = 0; w < 2; ++w) {
      const auto& win = trace->capture_windows[w];
      if (trace->kernels.start_ns[i] >= win.start && trace->kernels.start_ns[i] < *win.end) ++per_window[w];
    }
  }
  EXPECT_EQ(per_window, program.kernels_per_window);
  bool said = false;
  for (const auto& note : trace->notes) said |= note.kind == "capture_windows" && note.text.find("recorded in 2 capture window(s)") != std::string::npos;
  EXPECT_TRUE(said);
  auto steps = analyze_steps(*trace, OpRuleSet::builtin(), {});
  ASSERT_TRUE(steps.has_value()) << steps.error().message;
  // 3 whole steps in window 1, 2 whole ones in window 2 (the third started there and was cut).
  EXPECT_EQ(steps->steps.size(), 5u);
  for (const auto& s : steps->steps) EXPECT_EQ(s.kernels, s.start_ns < trace->capture_windows[1].start ? 4 : 5);
  // Steps in different windows are not consecutive: no GPU period spans the unrecorded gap
  // (2 periods inside window 1, 1 inside window 2; 4 if one spanned the gap).
  ASSERT_EQ(steps->groups.size(), 1u);
  EXPECT_EQ(steps->groups[0].gpu_period.count, 3);
  EXPECT_LT(steps->groups[0].gpu_period.max, trace->capture_windows[1].start - *trace->capture_windows[0].end);
}

TEST(LiveCapture, PartialStepsAtAWindowEdgeAreLeftOutAndSaid) {
  TempDir dir;
  TracerConfig config;
  config.live.paused = true;
  config.step_range = "decode_step";
  SimulatedProgram program(config);
  for (int i = 0; i < 2; ++i) program.step(2, 3);
  program.live->request({ControlRequest::Kind::kStart});
  program.step(2, 3);
  program.step(2, 3);
  // A step starts inside window 1, which is stopped and a window 2 started while the step runs:
  // CUPTI recorded the range's start in window 1 and its end in window 2 and pairs them, so the
  // trace holds one range straddling the gap between windows; the analysis must leave it out.
  program.live->on_step(true);
  program.clock += kMs;
  program.live->request({ControlRequest::Kind::kStop});
  program.clock += 500'000;
  program.live->request({ControlRequest::Kind::kStart});
  NvtxRow straddling;
  straddling.start = program.clock - kMs;
  straddling.end = program.clock + kMs;
  straddling.pid = straddling.tid = straddling.end_tid = 4242;
  straddling.text = program.strings.intern("decode_step");
  program.recorded.nvtx.push_back(straddling);
  program.live->on_step(false);
  const std::string path = program.write(dir.path() + "/edge.sqlite");
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value());
  auto steps = analyze_steps(*trace, OpRuleSet::builtin(), {});
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(steps->steps.size(), 2u);
  bool said = false;
  for (const auto& note : steps->notes) {
    said |= note.kind == "steps_cut_by_capture" && note.count == 1 &&
            note.text.find("1 step(s) cut by a capture window's edge left out as partial") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(LiveCapture, TailCaptureWritesExactlyTheLastNStepsWhenAStepIsSlow) {
  TempDir dir;
  TracerConfig config;
  config.live.keep_last_steps = 4;
  config.live.when_factor = 3;
  config.step_range = "auto";
  config.flush_ms = 10;  // written 100 ms after the slow step (the least grace)
  SimulatedProgram program(config);
  program.on = true;  // tail capture records all along
  program.kernels_per_window.push_back(0);
  ASSERT_TRUE(program.live->holds_records());
  std::vector<RecordBatch> written;
  int slow_steps = 0;
  auto collect = [&] {
    // The collector: everything held, a window written once due.
    program.live->hold(program.recorded);
    while (auto window = program.live->due_window(false, [](RecordBatch&) {})) written.push_back(std::move(*window));
    program.live->forget_old();
  };
  for (int i = 0; i < 80; ++i) {
    const bool slow = i == 30 || i == 50 || i == 52;  // 52: two slow steps within one grace period
    slow_steps += slow;
    program.step(slow ? 40 : 5, 3);
    collect();
  }
  ASSERT_EQ(written.size(), 3u);  // each once its grace period passed, while the program ran on
  EXPECT_FALSE(program.live->due_window(true, [](RecordBatch&) {}).has_value());
  EXPECT_EQ(slow_steps, 3);
  auto writer = TraceDbWriter::create(dir.path() + "/tail.sqlite", 4242);
  ASSERT_TRUE(writer.has_value());
  for (auto& w : written) ASSERT_TRUE((*writer)->append(w, program.strings).has_value());
  ASSERT_TRUE((*writer)->finish({{"tracer", "t"}, {"capture", config.live.describe()}}, "sim", {}, program.strings).has_value());
  writer->reset();
  auto trace = open_trace(dir.path() + "/tail.sqlite");
  ASSERT_TRUE(trace.has_value());
  ASSERT_EQ(trace->capture_windows.size(), 3u);
  EXPECT_NE(trace->capture_windows[0].opened_by.find("a step of 40.300 ms (median 5.300 ms)"), std::string::npos);
  auto steps = analyze_steps(*trace, OpRuleSet::builtin(), {});
  ASSERT_TRUE(steps.has_value());
  // Each window: the slow step and the 3 before it, whole, and nothing after the slow step; the
  // third slow step came 2 steps after the second, so its window starts where the second's ended
  // (windows never overlap): steps 51 and 52.
  ASSERT_EQ(steps->steps.size(), 10u);
  EXPECT_EQ(trace->kernels.size(), 10u * 3u);
  const std::vector<std::pair<std::size_t, std::size_t>> window_steps = {{0, 4}, {4, 8}, {8, 10}};
  for (std::size_t w = 0; w < 3; ++w) {
    int slow = 0;
    for (std::size_t i = window_steps[w].first; i < window_steps[w].second; ++i) {
      EXPECT_GE(steps->steps[i].start_ns, trace->capture_windows[w].start);
      EXPECT_LE(steps->steps[i].end_ns, *trace->capture_windows[w].end);
      slow += steps->steps[i].wall_ns > 30 * kMs;
    }
    EXPECT_EQ(slow, 1) << "window " << w;
    EXPECT_GT(steps->steps[window_steps[w].second - 1].wall_ns, 30 * kMs);  // the slow step is each window's last
  }
}

}  // namespace
}  // namespace kernscope::tracer
