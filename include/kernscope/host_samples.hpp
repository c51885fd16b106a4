// The host side of a trace beside its CUDA records: stacks sampled on a timer, from Nsight Systems
// (--sample=cpu, Python backtraces with --python-sampling) or from `kernscope record --sample cpu`
// (Python frames from inside the process), both stored in nsys's COMPOSITE_EVENTS and
// SAMPLING_CALLCHAINS tables; and what the recorder said about itself (KERNSCOPE_HOST_INFO).
// Loaded with the NVTX event kind when its detail is asked (OpenOptions::detail_kinds; garbage
// collections are NVTX ranges, see host_profile.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernscope/string_pool.hpp"
#include "kernscope/time_units.hpp"

namespace kernscope {

// Distinct call stacks, each a run of frames innermost first: stack i is frames
// [first_frame[i], first_frame[i + 1]) (first_frame has one entry more than there are stacks).
struct HostStacks {
  std::vector<std::uint32_t> first_frame;
  std::vector<StringId> symbol;  // function (Python: qualified name; native: symbol, or the address)
  std::vector<StringId> module;  // Python file or shared object
  std::vector<std::uint8_t> unresolved;  // 1: the symbol could not be resolved (stripped binary)

  std::size_t size() const { return first_frame.empty() ? 0 : first_frame.size() - 1; }
  std::uint32_t frames_of(std::size_t stack) const { return first_frame[stack + 1] - first_frame[stack]; }
};

// One row per thread-sample, in time order.
struct HostSampleColumns {
  std::vector<TimeNs> time_ns;
  std::vector<std::int64_t> global_tid;
  std::vector<std::uint32_t> stack;  // index into HostStacks

  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f(s.time_ns); f(s.global_tid); f(s.stack);
  }
  std::size_t size() const { return time_ns.size(); }
};

struct HostData {
  HostSampleColumns samples;
  HostStacks stacks;
  // KERNSCOPE_HOST_INFO rows, in file order (sampler_hz_asked, sampler_busy_share, gil_wait, ...).
  std::vector<std::pair<std::string, std::string>> info;
  // Wall-clock samples (kernscope's sampler: every thread at each tick, running or not), where a
  // sample stands for the time since its thread's previous one; otherwise CPU samples (nsys
  // --sample=cpu: a thread is sampled while it runs), each standing for one sampling period.
  bool wall_clock = false;
};

}  // namespace kernscope
