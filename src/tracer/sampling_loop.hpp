// The body of a sampler's own thread (NVML's GPU samples, the launching threads' CPU clocks): sample
// every `interval` while active, sleep while paused, return once stopping. One loop for every
// sampler, so pausing and stopping behave alike in each.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kernscope::tracer {

// `mutex` guards `stopping` and `active` (and whatever else the sampler keeps under it); `wake` is
// notified when either changes. `sample` runs without the mutex held.
template <class Rep, class Period, class Sample>
void run_sampling_loop(std::mutex& mutex, std::condition_variable& wake, const bool& stopping, const bool& active,
                       std::chrono::duration<Rep, Period> interval, Sample&& sample) {
  std::unique_lock lock(mutex);
  while (!stopping) {
    if (!active) {
      wake.wait(lock, [&] { return stopping || active; });
      continue;
    }
    lock.unlock();
    sample();
    lock.lock();
    wake.wait_for(lock, interval, [&] { return stopping || !active; });
  }
}

}  // namespace kernscope::tracer
