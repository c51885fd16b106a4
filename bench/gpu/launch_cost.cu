// What a tracer costs per kernel launch, where launches are the bottleneck.
//
//   launch_cost eager N REPS      N launches of an empty kernel from the host, synchronized at the end
//   launch_cost graph N REPS      N/32 replays of a CUDA graph of 32 empty kernels
//   launch_cost eager-ab N REPS   as eager (graph-ab as graph), each repetition run twice: once
//   launch_cost graph-ab N REPS   untraced, once between cudaProfilerStart and cudaProfilerStop
//   launch_cost nvtx N REPS       N nvtxRangePushA/nvtxRangePop pairs after CUDA started (a tracer
//                                 routes NVTX to its handlers then, and they stay while it is paused)
//   launch_cost attach-ab N REPS  eager, each repetition run twice under bench/gpu/cupti_floor.cpp
//                                 injected with CUPTI_FLOOR_AB=1: once with CUPTI detached, once
//                                 attached in the floor's paused state (the order alternating)
//   launch_cost late N REPS       eager, REPS repetitions with no tracer in the process, then the
//                                 tracer named in CUDA_INJECTION64_PATH injected by hand (dlopen,
//                                 InitializeInjection), SETTLE_S seconds for it to settle (a paused
//                                 kernscope detaches CUPTI), and REPS repetitions more: before and after
//                                 in one process. CUDA starts with the variable (and NVTX's) unset, so
//                                 the driver loads nothing; without the variable the same schedule runs
//                                 with nothing injected (the control for the drift over the process's life)
//
// Prints the median over REPS of nanoseconds per kernel (host wall time / kernels), after a warm-up
// repetition, and beside it what the host spent per kernel: CPU time of the launching thread and of
// the whole process (a tracer's own threads included), and the launching thread's user-mode
// instructions (perf_event_open; "instr=na" where the kernel refuses it). Instructions do not move
// with the host's clock or its neighbours, so a tracer that adds work to the launch path shows there
// even when wall time drifts by more than that work between processes. Run it with and without a tracer, interleaved: the difference is the tracer's cost per
// kernel on a path where nothing else hides it (an empty kernel runs shorter than its launch). The
// -ab forms, under a tracer that records only between cudaProfilerStart/Stop, measure both in one
// process, alternating, so the machine's drift between processes cancels out.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

__global__ void empty_kernel(int* sink) {
  if (sink && threadIdx.x == 1u << 30) *sink = 0;  // never true: keeps the kernel from being elided
}

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "launch_cost: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// The calling thread's user-mode instructions retired; -1 when perf events are not allowed.
class InstructionCounter {
 public:
  InstructionCounter() {
    perf_event_attr a{};
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  }
  ~InstructionCounter() {
    if (fd_ >= 0) close(fd_);
  }
  long long read_now() const {
    long long v = 0;
    if (fd_ < 0 || ::read(fd_, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return -1;
    return v;
  }

 private:
  int fd_ = -1;
};

static double cpu_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

// One repetition's figures per kernel.
struct Figures {
  double wall_ns, thread_cpu_ns, process_cpu_ns, instructions;
};

struct Workload {
  bool graph = false;
  long n = 0;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t exec = nullptr;
  static constexpr int kNodes = 32;

  InstructionCounter counter;

  long kernels() const { return graph ? n / kNodes * kNodes : n; }
  Figures run() const {
    const long long i0 = counter.read_now();
    const double th0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), pr0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    const auto t0 = std::chrono::steady_clock::now();
    if (graph) {
      for (long i = 0; i < n / kNodes; ++i) check(cudaGraphLaunch(exec, stream), "graph launch");
    } else {
      for (long i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, stream>>>(nullptr);
    }
    check(cudaStreamSynchronize(stream), "sync");
    const auto t1 = std::chrono::steady_clock::now();
    const double k = static_cast<double>(kernels());
    const long long i1 = counter.read_now();
    return {std::chrono::duration<double, std::nano>(t1 - t0).count() / k, (cpu_ns(CLOCK_THREAD_CPUTIME_ID) - th0) / k,
            (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - pr0) / k, i0 < 0 || i1 < 0 ? -1.0 : static_cast<double>(i1 - i0) / k};
  }
  double run_ns_per_kernel() const { return run().wall_ns; }
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void print(const char* label, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%s ns_per_kernel=%.1f min=%.1f max=%.1f\n", label, v[v.size() / 2], v.front(), v.back());
}

// One field of each repetition's figures.
static std::vector<double> values(const std::vector<Figures>& f, double Figures::* field) {
  std::vector<double> v;
  for (const auto& x : f) v.push_back(x.*field);
  return v;
}

// The wall-time line as before, then the host's figures per kernel (medians over the repetitions).
static void print(const char* label, const std::vector<Figures>& f) {
  std::vector<double> sorted = values(f, &Figures::wall_ns);
  std::sort(sorted.begin(), sorted.end());
  const double instr = median(values(f, &Figures::instructions));
  char instr_text[32] = "na";
  if (instr >= 0) std::snprintf(instr_text, sizeof instr_text, "%.1f", instr);
  std::printf("%s ns_per_kernel=%.1f min=%.1f max=%.1f thread_cpu_ns=%.1f process_cpu_ns=%.1f instr=%s\n", label,
              sorted[sorted.size() / 2], sorted.front(), sorted.back(), median(values(f, &Figures::thread_cpu_ns)),
              median(values(f, &Figures::process_cpu_ns)), instr_text);
}

// How fast this host runs plain CPU work right now: a walk along a random cycle through 1 MiB (L2-resident
// loads, each depending on the last, and a multiply). The H200 hosts' launch time per kernel moved by up
// to ±22 % between the first and second half of one process with nothing injected, the launching thread's
// CPU time with it. Timed beside each launch block in case that was the host's CPU speed: it was not (launch
// time per probe time spread wider still, bench/RESULTS.md), and the figure is printed to show it.
class HostSpeedProbe {
 public:
  HostSpeedProbe() : next_(1u << 18) {
    std::vector<std::uint32_t> order(next_.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::uint64_t x = 88172645463325252ull;  // xorshift: the same cycle in every process
    for (std::size_t i = order.size() - 1; i > 0; --i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::swap(order[i], order[x % (i + 1)]);
    }
    for (std::size_t i = 0; i < order.size(); ++i) next_[order[i]] = order[(i + 1) % order.size()];
  }
  // Nanoseconds for `steps` steps of the walk.
  double run(long steps) {
    std::uint32_t at = 0;
    std::uint64_t sum = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < steps; ++i) {
      at = next_[at];
      sum += at * 2654435761ull;
    }
    const auto t1 = std::chrono::steady_clock::now();
    sink_ = sink_ + sum;
    return std::chrono::duration<double, std::nano>(t1 - t0).count();
  }

 private:
  std::vector<std::uint32_t> next_;
  volatile std::uint64_t sink_ = 0;  // keeps the walk from being optimized away
};

// launch_cost late: REPS repetitions, the injection (when a library is named), SETTLE_S, a warm-up and
// REPS repetitions; then the ratio after/before of the medians: wall, the launching thread's CPU, the
// host speed probe timed beside each repetition (the order alternating), and wall per probe time.
static int run_late(const Workload& w, int reps, const std::string& library, double settle_s) {
  HostSpeedProbe probe;
  // As many steps as take one launch block's time, so that probe and launches sample the same stretches.
  const double block_ns = w.run().wall_ns * static_cast<double>(w.kernels());
  const long steps = std::max(100000L, static_cast<long>(1e6 * block_ns / probe.run(1000000)));
  std::vector<Figures> before, after;
  std::vector<double> probe_before, probe_after;
  const auto measure = [&](std::vector<Figures>& figures, std::vector<double>& probes) {
    for (int r = 0; r < reps; ++r) {
      if (r % 2 == 0) probes.push_back(probe.run(steps));
      figures.push_back(w.run());
      if (r % 2 == 1) probes.push_back(probe.run(steps));
    }
  };
  measure(before, probe_before);
  if (!library.empty()) {
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
    auto initialize = handle ? reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection")) : nullptr;
    if (!initialize) {
      std::fprintf(stderr, "launch_cost late: cannot inject %s: %s\n", library.c_str(), dlerror());
      return 1;
    }
    initialize();
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(settle_s));
  // On stderr, where the tracer's KERNSCOPE_DEBUG_DETACH lines go: paused_floor.sh checks the detach came first.
  std::fprintf(stderr, "launch_cost: the after half starts\n");
  w.run();  // warm-up, as before the first repetitions
  measure(after, probe_after);
  print("late before", before);
  print("late after", after);
  const auto per_probe = [](const std::vector<Figures>& f, const std::vector<double>& probes) {
    std::vector<double> v;
    for (std::size_t i = 0; i < f.size(); ++i) v.push_back(f[i].wall_ns / probes[i]);
    return median(v);
  };
  const double wall = median(values(after, &Figures::wall_ns)) / median(values(before, &Figures::wall_ns));
  const double thread = median(values(after, &Figures::thread_cpu_ns)) / median(values(before, &Figures::thread_cpu_ns));
  std::printf("late %s after/before wall=%.5f thread_cpu=%.5f probe=%.5f per_probe=%.5f\n", library.empty() ? "none" : "injected",
              wall, thread, median(probe_after) / median(probe_before),
              per_probe(after, probe_after) / per_probe(before, probe_before));
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[1] : "";
  if (mode != "eager" && mode != "graph" && mode != "eager-ab" && mode != "graph-ab" && mode != "attach-ab" && mode != "nvtx" &&
      mode != "late") {
    std::fprintf(stderr, "usage: launch_cost eager|graph|eager-ab|graph-ab|attach-ab|nvtx|late N REPS\n");
    return 2;
  }
  // late: the driver reads CUDA_INJECTION64_PATH when CUDA starts; unset before that, it loads nothing.
  std::string late_library;
  if (mode == "late") {
    if (const char* lib = std::getenv("CUDA_INJECTION64_PATH")) late_library = lib;
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("NVTX_INJECTION64_PATH");
  }
  // SETTLE_S: seconds to wait once CUDA started, before anything is measured: a paused kernscope detaches
  // CUPTI only a grace (and its first device records) after start, so a measurement of the detached
  // state must come after that (paused_floor.sh).
  const double settle_s = std::getenv("SETTLE_S") ? std::atof(std::getenv("SETTLE_S")) : 0.0;
  if (settle_s > 0 && mode != "late") {  // late settles after its injection instead
    check(cudaFree(nullptr), "CUDA start");
    std::this_thread::sleep_for(std::chrono::duration<double>(settle_s));
  }
  if (mode == "nvtx") {
    check(cudaFree(nullptr), "CUDA start");  // a tracer's init (which points NVTX at its handlers) runs here
    const long n = std::atol(argv[2]);
    std::vector<double> wall, thread;
    for (int r = 0; r <= std::atoi(argv[3]); ++r) {
      const double th0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
      const auto t0 = std::chrono::steady_clock::now();
      for (long i = 0; i < n; ++i) {
        nvtxRangePushA("decode_step");
        nvtxRangePop();
      }
      const auto t1 = std::chrono::steady_clock::now();
      if (r == 0) continue;  // warm-up
      wall.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
      thread.push_back((cpu_ns(CLOCK_THREAD_CPUTIME_ID) - th0) / n);
    }
    std::printf("nvtx ns_per_pair=%.2f thread_cpu_ns=%.2f\n", median(wall), median(thread));
    return 0;
  }
  const bool ab = mode.ends_with("-ab");
  int (*attach)(int) = nullptr;  // the CUPTI floor's switch (attach-ab)
  if (mode == "attach-ab") {
    check(cudaFree(nullptr), "CUDA start");  // the driver loads the injection library when CUDA starts
    const char* lib = std::getenv("CUDA_INJECTION64_PATH");
    void* handle = lib ? dlopen(lib, RTLD_NOLOAD | RTLD_NOW) : nullptr;
    if (handle) attach = reinterpret_cast<int (*)(int)>(dlsym(handle, "cupti_floor_attach"));
    if (!attach) {
      std::fprintf(stderr, "launch_cost attach-ab: run it with CUDA_INJECTION64_PATH=libcupti_floor.so CUPTI_FLOOR_AB=1\n");
      return 2;
    }
  }
  Workload w;
  w.graph = mode.starts_with("graph");
  w.n = std::atol(argv[2]);
  const int reps = std::atoi(argv[3]);
  check(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking), "stream");
  if (w.graph) {
    cudaGraph_t g;
    check(cudaStreamBeginCapture(w.stream, cudaStreamCaptureModeGlobal), "capture");
    for (int i = 0; i < Workload::kNodes; ++i) empty_kernel<<<1, 32, 0, w.stream>>>(nullptr);
    check(cudaStreamEndCapture(w.stream, &g), "end capture");
    check(cudaGraphInstantiate(&w.exec, g, 0), "instantiate");
  }
  w.run_ns_per_kernel();  // warm-up
  if (mode == "late") return run_late(w, reps, late_library, settle_s);
  std::vector<Figures> plain, traced;
  for (int r = 0; r < reps; ++r) {
    if (attach) {
      // Detached and attached, the order alternating: a drift inside the pair falls on both.
      for (int on : r % 2 == 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0}) {
        check(cudaStreamSynchronize(w.stream), "sync");
        if (attach(on) != 0) {
          std::fprintf(stderr, "launch_cost: cupti_floor_attach(%d) failed\n", on);
          return 1;
        }
        (on ? traced : plain).push_back(w.run());
      }
      continue;
    }
    plain.push_back(w.run());
    if (!ab) continue;
    check(cudaProfilerStart(), "profiler start");
    traced.push_back(w.run());
    check(cudaProfilerStop(), "profiler stop");
  }
  const std::string label = w.graph ? "graph" : "eager";
  print(ab ? (label + (attach ? " detached" : " untraced")).c_str() : label.c_str(), plain);
  if (ab) {
    print((label + (attach ? " attached" : " traced")).c_str(), traced);
    std::vector<double> diff;
    for (std::size_t i = 0; i < plain.size(); ++i) diff.push_back(traced[i].wall_ns - plain[i].wall_ns);
    print((label + " cost").c_str(), diff);
  }
  return 0;
}
