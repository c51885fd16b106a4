// Paused without CUPTI: CUPTI merely attached to a process costs about 1 % of an eager
// decode's step time, with nothing enabled (bench/RESULTS.md, paused_attach_ab.sh), so a paused
// tracer detaches it (flush, cuptiFinalize) between windows and attaches it again when a window
// opens. Only where nothing between windows needs CUPTI's callbacks: windows opened by `kernscope
// capture` or by time (--every/--for). Steps (--step-range, --every-steps, tail capture) and capture
// ranges are watched through CUPTI callbacks, and whole-graph records cannot be enabled once graphs
// exist, so those keep CUPTI attached, as does `record --between-windows attached` (KERNSCOPE_PAUSED_DETACH=0).
//
// CuptiAttachment orders the switches without CUPTI: the tracer gives it CUPTI's attach, detach and
// record switches, the GPU-free tests fake them (tests/unit/cupti_attachment_test.cpp). A window's
// close switches the records off at once; CUPTI is detached a grace period later unless a window
// opened meanwhile, so that the GPU work launched inside the window ends and its records arrive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tracer/config/tracer_config.hpp"

namespace kernscope::tracer {

// CLOCK_REALTIME in nanoseconds: the clock of CUPTI's timestamps on Linux (the Python hook's too),
// read without CUPTI, which a call while detached would attach again.
std::int64_t realtime_ns();

class CuptiAttachment {
 public:
  struct Ops {
    std::function<std::string()> attach;  // "" when attached (buffers registered, settings restored), else why not
    std::function<std::string()> detach;  // "" when detached (records flushed first), else why not
    std::function<void(bool on, const std::string& why)> record;  // the recorded kinds on or off (attached only)
    std::function<void(const std::string& line)> say;             // one line on stderr
    // Whether CUPTI may be detached yet (unset: always): false puts the detach off by a grace. The
    // tracer waits for the devices' records, which CUPTI does not give again once attached anew.
    std::function<bool()> ready;
  };
  // Starts attached (the tracer's set-up attached CUPTI) and not recording.
  CuptiAttachment(std::chrono::milliseconds grace, Ops ops);
  ~CuptiAttachment();
  CuptiAttachment(const CuptiAttachment&) = delete;
  CuptiAttachment& operator=(const CuptiAttachment&) = delete;

  // A window opens: attaches CUPTI first when detached. False when it could not (said): recording
  // stays off, the program goes on.
  bool start_recording(const std::string& why);
  // A window closes: records off now, CUPTI detached `grace` later unless a window opened.
  void stop_recording(const std::string& why);
  // Detaches once `grace` has passed (the set-up's state, before the first window).
  void detach_later();
  // The program ends: no more switches. Waits at most `bound` for a detach under way (it may wait on
  // a program thread that a terminating signal interrupted inside cuptiFinalize).
  enum class End : std::uint8_t {
    kAttached,      // its records can be flushed
    kDetached,      // nothing to flush, and no CUPTI call
    kDetachUnderWay // a detach did not end within `bound`: it flushed first, so nothing is left to
                    // flush, and a CUPTI call could wait on it; its thread is left running, so the
                    // object must outlive the process (the tracer then never destroys it)
  };
  End finish(std::chrono::milliseconds bound = std::chrono::milliseconds(1500));

  bool attached() const;
  bool recording() const;
  // Rows for KERNSCOPE_TRACER_INFO: paused_cupti (the mode and counts).
  std::vector<std::pair<std::string, std::string>> info() const;

 private:
  void run();
  // Detaches with mutex_ released while CUPTI is being detached (`lock` holds it on entry and exit).
  void detach(std::unique_lock<std::mutex>& lock);

  std::chrono::milliseconds grace_;
  Ops ops_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool attached_ = true;
  bool recording_ = false;
  bool finished_ = false;
  // A detach runs outside mutex_ (it waits for the collector and for a program thread's CUDA call):
  // a window opening meanwhile waits for it, the program's end waits for it at most a bound.
  bool detaching_ = false;
  bool worker_done_ = false;
  std::optional<std::chrono::steady_clock::time_point> detach_at_;
  std::int64_t attaches_ = 0, detaches_ = 0, attach_failures_ = 0, detach_failures_ = 0;
  std::thread worker_;  // detaches when due; never calls CUPTI otherwise
};

}  // namespace kernscope::tracer
