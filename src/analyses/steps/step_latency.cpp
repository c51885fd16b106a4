#include "analyses/steps/step_latency.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kernscope {

// The capture window (live capture) a time lies in, or -1 (none, or a trace recorded whole). Two
// steps in different windows are not consecutive: the steps between them were not recorded, so no
// GPU period spans the gap.
int capture_window_of(const Trace& trace, TimeNs t) {
  for (std::size_t w = 0; w < trace.capture_windows.size(); ++w) {
    if (t >= trace.capture_windows[w].start && t < trace.capture_windows[w].end.value_or(INT64_MAX)) return static_cast<int>(w);
  }
  return -1;
}

void read_ttft(const std::vector<Step>& steps, StepAnalysis& result) {
  // TTFT: the last prefill group's steps, each until its token reaches the host (where seen) or its
  // GPU work ends.
  for (auto it = result.groups.rbegin(); it != result.groups.rend(); ++it) {
    if (it->phase != Phase::kPrefill) continue;
    std::vector<std::int64_t> felt;
    for (const auto& st : steps) {
      // Time to first token is wall time from the step's start until its token exists: the end
      // of its host range, or of its GPU work when that ends later (a serving engine's prefill
      // range ends when its kernels are queued). Waiting inside the step for earlier GPU work
      // (a stream waiting on an event) is time the request waits too, so it counts.
      // Where the trace shows the first token reaching the host (a forward pass's copy of its
      // sampled token), it ends there: the host work after it (the next pass's input) is not TTFT.
      if (st.group == it->name && st.phase == Phase::kPrefill) {
        felt.push_back((st.token_ns > st.start_ns ? st.token_ns : std::max(st.end_ns, st.gpu_end_ns)) - st.start_ns);
        // Said when most of that time is not the step's own GPU work (a serving engine's step
        // waiting on an event of earlier work): TTFT is right, the prefill itself is shorter.
        if (st.token_ns <= st.start_ns && 10 * (st.gpu_end_ns - st.end_ns) > felt.back() && felt.back() > 2 * st.kernel_ns) {
          char line[400];
          std::snprintf(line, sizeof line,
                        "prefill: TTFT %.3f ms counts until its GPU work ends, %.3f ms after its host range; its "
                        "kernels summed %.3f ms, so most of that time it waited (for earlier GPU work, the host or "
                        "copies), not computed",
                        felt.back() / 1e6,
                        static_cast<double>(st.gpu_end_ns - st.end_ns) / 1e6, st.kernel_ns / 1e6);
          result.notes.push_back({"prefill_mostly_waiting", NoteSeverity::kInfo, line});
        }
      }
    }
    result.ttft_samples = felt;
    result.ttft = distribution(std::move(felt));
    break;
  }
}

void read_tpot(const Trace& trace, StepAnalysis& result) {
  // TPOT from the right clock, over the last decode group's steps in start order. A step lasts
  // from its start until its range or its GPU work ends, whichever is later: its wall where the
  // range covers its GPU work, never the host range of a step whose GPU work outlives it. Where the
  // steps overlap (most start before the previous step's GPU work ends: a pipelined loop, CUDA-graph
  // replays launched ahead), a step's own time counts its neighbours' work, and the GPU period (one
  // step's GPU end to the next's, across two or more consecutive steps) is the time per token.
  // Never 0: a period of 0 (two steps ending together) is no sample.
  const StepGroup* decode = nullptr;
  for (const auto& g : result.groups) {
    if (g.phase == Phase::kDecode) decode = &g;
  }
  std::vector<const Step*> members;
  if (decode) {
    for (const auto& st : result.steps) {
      if (st.group == decode->name && st.phase == Phase::kDecode) members.push_back(&st);
    }
  }
  std::stable_sort(members.begin(), members.end(), [](const Step* x, const Step* y) { return x->start_ns < y->start_ns; });
  std::vector<std::int64_t> own, period;
  std::size_t outlived = 0, overlapping = 0, pairs = 0;
  TimeNs previous_gpu_end = 0;
  int previous_window = -1;
  for (const Step* m : members) {
    own.push_back(std::max(m->end_ns, m->gpu_end_ns) - m->start_ns);
    outlived += m->gpu_end_ns > m->end_ns;
    if (m->gpu_end_ns == 0) continue;
    const int window = capture_window_of(trace, m->start_ns);
    if (window != previous_window) previous_gpu_end = 0;  // not consecutive: a window's gap between
    previous_window = window;
    if (previous_gpu_end != 0) {
      ++pairs;
      overlapping += m->start_ns < previous_gpu_end;
      if (m->gpu_end_ns > previous_gpu_end) period.push_back(m->gpu_end_ns - previous_gpu_end);
    }
    previous_gpu_end = std::max(previous_gpu_end, m->gpu_end_ns);
  }
  const bool pipelined = 2 * overlapping > pairs && !period.empty();
  result.tpot_samples = pipelined ? std::move(period) : std::move(own);
  result.tpot_from = pipelined ? "GPU period" : outlived > 0 ? "step start to GPU end" : "step wall";
  result.tpot = distribution(result.tpot_samples);
  // Ranges that end long before their GPU work measure launching, not the step: said, with the
  // GPU's own pace beside it.
  if (result.decode_wall.count > 0 && result.decode_kernel_ns.p50 > 2 * result.decode_wall.p50 && result.decode_gpu_period.count > 0) {
    char line[640];
    std::snprintf(line, sizeof line,
                  "decode steps are asynchronous: their NVTX ranges end before their GPU work (wall p50 %.3f ms, "
                  "kernel time p50 %.3f ms per step), so the step wall shows launch time, not TPOT; the GPU "
                  "finishes a step every %.3f ms (p50 of the GPU period); TPOT is %s",
                  result.decode_wall.p50 / 1e6, result.decode_kernel_ns.p50 / 1e6, result.decode_gpu_period.p50 / 1e6,
                  pipelined ? "that period (the steps overlap)" : "each step's start until its GPU work ends (the steps do not overlap)");
    result.notes.push_back({"asynchronous_decode_steps", NoteSeverity::kInfo, line});
  } else if (pipelined) {
    result.notes.push_back({"overlapping_decode_steps", NoteSeverity::kInfo,
                            "decode steps overlap (" + std::to_string(overlapping) + " of " + std::to_string(pairs) +
                                " start before the previous step's GPU work ends): TPOT is the GPU period",
                            static_cast<std::int64_t>(overlapping)});
  }
}

}  // namespace kernscope
