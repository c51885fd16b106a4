// Paused with CUPTI detached (issue 30, cupti_attachment.hpp) without a GPU: which modes detach, and
// the order of CUPTI's attach, detach and record switches, against a fake CUPTI that forgets what was
// enabled when it is detached (as cuptiFinalize does) and counts every switch made while detached.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tracer/activity_decoder.hpp"
#include "tracer/cupti_attachment.hpp"
#include "tracer/live_capture.hpp"

namespace kernscope::tracer {
namespace {

using namespace std::chrono_literals;

TracerConfig from_env(std::map<std::string, std::string> vars) {
  auto config = config_from_env([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
  EXPECT_TRUE(config.has_value());
  return config ? *config : TracerConfig{};
}

TEST(CuptiAttachment, DetachesOnlyWhereNothingBetweenWindowsNeedsCupti) {
  // Windows from `kernscope capture` or by time: detached.
  EXPECT_TRUE(choose_paused_detach(from_env({{"KERNSCOPE_PAUSED", "1"}})).detach);
  EXPECT_TRUE(choose_paused_detach(from_env({{"KERNSCOPE_EVERY_S", "60"}, {"KERNSCOPE_FOR_S", "1"}})).detach);
  // Steps are watched through NVTX callbacks: attached, and said why.
  const auto steps = choose_paused_detach(from_env({{"KERNSCOPE_PAUSED", "1"}, {"KERNSCOPE_STEP_RANGE", "auto"}}));
  EXPECT_FALSE(steps.detach);
  EXPECT_NE(steps.why.find("steps"), std::string::npos);
  EXPECT_FALSE(choose_paused_detach(from_env({{"KERNSCOPE_EVERY_STEPS", "500"}, {"KERNSCOPE_STEPS", "10"}})).detach);
  EXPECT_FALSE(choose_paused_detach(from_env({{"KERNSCOPE_KEEP_LAST_STEPS", "5"}, {"KERNSCOPE_WHEN", "2x p50"}})).detach);
  // Whole-graph records cannot be enabled again once graphs exist; --hw-trace is set at context creation.
  EXPECT_FALSE(choose_paused_detach(from_env({{"KERNSCOPE_PAUSED", "1"}, {"KERNSCOPE_CUDA_GRAPH_TRACE", "graph"}})).detach);
  EXPECT_FALSE(choose_paused_detach(from_env({{"KERNSCOPE_PAUSED", "1"}, {"KERNSCOPE_HW_TRACE", "1"}})).detach);
  // The switch that keeps the attached-paused state (the A/B's other side).
  const auto forced = choose_paused_detach(from_env({{"KERNSCOPE_PAUSED", "1"}, {"KERNSCOPE_PAUSED_DETACH", "0"}}));
  EXPECT_FALSE(forced.detach);
  EXPECT_NE(forced.why.find("KERNSCOPE_PAUSED_DETACH=0"), std::string::npos);
  // Not live (the usual recording, capture ranges, --delay): never.
  EXPECT_FALSE(choose_paused_detach(from_env({})).detach);
  EXPECT_FALSE(choose_paused_detach(from_env({{"KERNSCOPE_CAPTURE_RANGE", "cudaProfilerApi"}})).detach);
  EXPECT_FALSE(config_from_env([](const char* n) -> const char* {
                 return std::string(n) == "KERNSCOPE_PAUSED_DETACH" ? "yes" : nullptr;
               }).has_value());
}

// CUPTI as the attachment sees it: detaching forgets the enabled kinds.
struct FakeCupti {
  std::mutex mutex;
  bool attached = true;
  bool refuse_attach = false;
  std::set<std::string> enabled;
  int switches_while_detached = 0;
  std::vector<std::string> log;
  std::vector<std::string> said;
  std::function<void()> during_detach;  // what a detach waits for (a program thread leaving a CUDA call)

  CuptiAttachment::Ops ops() {
    CuptiAttachment::Ops o;
    o.attach = [this]() -> std::string {
      std::lock_guard lock(mutex);
      log.push_back("attach");
      if (refuse_attach) return "CUPTI_ERROR_NOT_INITIALIZED";
      attached = true;
      return {};
    };
    o.detach = [this]() -> std::string {
      if (during_detach) during_detach();  // outside the fake's lock: a detach that waits
      std::lock_guard lock(mutex);
      log.push_back("detach");
      attached = false;
      enabled.clear();
      return {};
    };
    o.record = [this](bool on, const std::string&) {
      std::lock_guard lock(mutex);
      log.push_back(on ? "on" : "off");
      if (!attached) ++switches_while_detached;
      if (on) enabled = {"kernel", "memcpy", "runtime"};
      else enabled.clear();
    };
    o.say = [this](const std::string& line) {
      std::lock_guard lock(mutex);
      said.push_back(line);
    };
    return o;
  }
  bool is_attached() {
    std::lock_guard lock(mutex);
    return attached;
  }
  std::vector<std::string> take_log() {
    std::lock_guard lock(mutex);
    return std::exchange(log, {});
  }
};

bool wait_for(const std::function<bool()>& done) {
  for (int i = 0; i < 400; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

TEST(CuptiAttachment, DetachesAfterTheGraceAndAttachesAgainForEachWindow) {
  FakeCupti cupti;
  // A grace long enough that the check right after a close still sees CUPTI attached on a loaded
  // machine (wait_for polls for 2 s).
  CuptiAttachment attachment(250ms, cupti.ops());
  attachment.detach_later();
  ASSERT_TRUE(wait_for([&] { return !cupti.is_attached(); }));
  EXPECT_FALSE(attachment.attached());
  EXPECT_EQ(cupti.take_log(), (std::vector<std::string>{"detach"}));
  for (int window = 0; window < 5; ++window) {
    ASSERT_TRUE(attachment.start_recording("capture start"));
    // Attached first, then the kinds the detach forgot are enabled again.
    EXPECT_EQ(cupti.take_log(), (std::vector<std::string>{"attach", "on"})) << window;
    EXPECT_EQ(cupti.enabled, (std::set<std::string>{"kernel", "memcpy", "runtime"}));
    attachment.stop_recording("capture stop");
    // Records off at once; CUPTI stays for the grace (the window's GPU work delivers its records).
    EXPECT_TRUE(cupti.is_attached());
    ASSERT_TRUE(wait_for([&] { return !cupti.is_attached(); })) << window;
    EXPECT_EQ(cupti.take_log(), (std::vector<std::string>{"off", "detach"})) << window;
  }
  EXPECT_EQ(cupti.switches_while_detached, 0);
  EXPECT_EQ(attachment.finish(), CuptiAttachment::End::kDetached);  // nothing to flush, and no CUPTI call
  EXPECT_TRUE(cupti.take_log().empty());
  EXPECT_EQ(attachment.info().front().second, "detached between windows: 6 detach(es), 5 re-attach(es)");
}

TEST(CuptiAttachment, AWindowOpenedWithinTheGraceKeepsCuptiAttached) {
  FakeCupti cupti;
  CuptiAttachment attachment(300ms, cupti.ops());
  ASSERT_TRUE(attachment.start_recording("every 1 s"));
  attachment.stop_recording("window time over");
  ASSERT_TRUE(attachment.start_recording("every 1 s"));
  std::this_thread::sleep_for(400ms);  // past the first close's grace: still recording, still attached
  EXPECT_TRUE(cupti.is_attached());
  EXPECT_TRUE(attachment.recording());
  EXPECT_EQ(cupti.take_log(), (std::vector<std::string>{"on", "off", "on"}));
  EXPECT_EQ(attachment.finish(), CuptiAttachment::End::kAttached);  // the tracer flushes what CUPTI holds
}

TEST(CuptiAttachment, AFailedAttachSaysSoAndStaysPaused) {
  FakeCupti cupti;
  CuptiAttachment attachment(10ms, cupti.ops());
  attachment.detach_later();
  ASSERT_TRUE(wait_for([&] { return !cupti.is_attached(); }));
  cupti.refuse_attach = true;
  EXPECT_FALSE(attachment.start_recording("capture start"));
  EXPECT_FALSE(attachment.recording());
  EXPECT_FALSE(attachment.attached());
  ASSERT_EQ(cupti.said.size(), 1u);
  EXPECT_NE(cupti.said[0].find("cannot attach CUPTI"), std::string::npos);
  EXPECT_NE(cupti.said[0].find("still paused"), std::string::npos);
  EXPECT_EQ(cupti.switches_while_detached, 0);
  // The next window tries again.
  cupti.refuse_attach = false;
  EXPECT_TRUE(attachment.start_recording("capture start"));
  EXPECT_TRUE(attachment.recording());
  EXPECT_NE(attachment.info().front().second.find("1 failed attach(es)"), std::string::npos);
  attachment.finish();
  EXPECT_FALSE(attachment.start_recording("after the end"));  // finished: no switch at all
}

// A detach waits for the collector and for a program thread (injection.cpp, detach_cupti): it runs
// without the attachment's lock, so a window opened meanwhile waits for it and then attaches, and
// nothing else is held up by it.
TEST(CuptiAttachment, AWindowOpenedDuringADetachWaitsForItThenAttaches) {
  FakeCupti cupti;
  std::atomic<bool> in_detach{false}, release{false};
  cupti.during_detach = [&] {
    in_detach = true;
    while (!release) std::this_thread::sleep_for(1ms);
  };
  CuptiAttachment attachment(10ms, cupti.ops());
  attachment.detach_later();
  ASSERT_TRUE(wait_for([&] { return in_detach.load(); }));
  EXPECT_TRUE(attachment.attached());  // not held up: the lock is free during the detach
  std::atomic<bool> opened{false};
  std::thread window([&] { opened = attachment.start_recording("capture start"); });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(opened.load());  // waits for the detach
  release = true;
  window.join();
  EXPECT_TRUE(opened.load());
  EXPECT_EQ(cupti.take_log(), (std::vector<std::string>{"detach", "attach", "on"}));
  EXPECT_EQ(attachment.finish(), CuptiAttachment::End::kAttached);
}

// The program's end while a detach waits on a program thread that will not come back (a terminating
// signal interrupted it inside cuptiFinalize): the end goes on after the bound, and says so.
TEST(CuptiAttachment, TheProgramsEndDoesNotWaitForAStuckDetach) {
  FakeCupti cupti;
  std::atomic<bool> in_detach{false}, release{false};
  cupti.during_detach = [&] {
    in_detach = true;
    while (!release) std::this_thread::sleep_for(1ms);
  };
  // Never deleted, as in the tracer: its thread outlives finish().
  auto* attachment = new CuptiAttachment(10ms, cupti.ops());
  attachment->detach_later();
  ASSERT_TRUE(wait_for([&] { return in_detach.load(); }));
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(attachment->finish(200ms), CuptiAttachment::End::kDetachUnderWay);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);
  EXPECT_FALSE(attachment->start_recording("after the end"));
  release = true;
  ASSERT_TRUE(wait_for([&] { return !cupti.is_attached(); }));  // the detach ends on its own thread
}

TEST(CuptiAttachment, TheFirstDetachWaitsUntilTheTracerIsReady) {
  FakeCupti cupti;
  std::atomic<int> asked{0};
  auto ops = cupti.ops();
  ops.ready = [&] { return ++asked >= 3; };  // the devices' records arrive at the third look
  CuptiAttachment attachment(10ms, ops);
  attachment.detach_later();
  ASSERT_TRUE(wait_for([&] { return !cupti.is_attached(); }));
  EXPECT_EQ(asked.load(), 3);
  EXPECT_EQ(cupti.take_log(), (std::vector<std::string>{"detach"}));
  attachment.finish();
}

// CUPTI attached anew numbers correlations from 1 again: the decoder keeps them unique across windows.
TEST(CuptiAttachment, CorrelationsStayUniqueAcrossReattaches) {
  StringPool strings;
  ActivityDecoder decoder(strings, [](bool, std::uint32_t) { return std::string("cudaLaunchKernel"); });
  auto decode_window = [&](std::uint64_t t) {
    RecordBatch batch;
    for (std::uint32_t id = 1; id <= 3; ++id) {
      CUpti_ActivityAPI a;
      std::memset(&a, 0, sizeof a);
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = 211;
      a.start = t + id * 10;
      a.end = t + id * 10 + 5;
      a.correlationId = id;
      decoder.decode(reinterpret_cast<CUpti_Activity*>(&a), batch);
      CUpti_ActivityKernel10 k;
      std::memset(&k, 0, sizeof k);
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.start = t + id * 10 + 20;
      k.end = t + id * 10 + 25;
      k.correlationId = id;
      k.name = "tiny";
      decoder.decode(reinterpret_cast<CUpti_Activity*>(&k), batch);
    }
    return batch;
  };
  const RecordBatch first = decode_window(1000);
  decoder.new_epoch();  // CUPTI detached and attached again
  const RecordBatch second = decode_window(5000);
  std::set<std::uint32_t> ids;
  for (const auto* b : {&first, &second}) {
    ASSERT_EQ(b->kernels.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(b->kernels[i].correlation, b->api_calls[i].correlation);  // each kernel still pairs with its launch
      ids.insert(b->kernels[i].correlation);
    }
  }
  EXPECT_EQ(ids.size(), 6u);  // and with no launch of the other window
}

TEST(CuptiAttachment, ARefusedWindowIsAnErrorForKernscopeCaptureAndTheSchedulePausesAgain) {
  TracerConfig config;
  config.live.paused = true;
  bool recording = false;
  int tries = 0;
  LiveCapture::Hooks hooks;
  hooks.now = [] { return Ns{1}; };
  hooks.record = [&](bool on, const std::string&) {
    ++tries;
    if (!on) recording = false;  // opening is refused (CUPTI could not attach)
  };
  hooks.recording = [&] { return recording; };
  LiveCapture live(config, 42, hooks);
  const std::string reply = live.request({ControlRequest::Kind::kStart});
  EXPECT_EQ(reply.rfind("error pid 42: recording could not start", 0), 0u) << reply;
  EXPECT_EQ(live.request({ControlRequest::Kind::kStatus}).find("recording (window"), std::string::npos);
  live.request({ControlRequest::Kind::kStart});  // tried again, not "already recording"
  EXPECT_EQ(tries, 2);
}

}  // namespace
}  // namespace kernscope::tracer
