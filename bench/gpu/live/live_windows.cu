// Live capture on a real GPU (issue 30): a step loop (NVTX "decode_step" ranges, tiny kernels, a
// sync per step) run under `kernscope record --paused` or tail capture. In "windows" mode the
// program opens and closes the windows itself by running `kernscope capture` between steps (the
// command returns once the process answered, so the program knows which launches were inside) and
// prints what each window must hold; the check script compares that with the trace.
//
//   live_windows windows          paused steps, a window of 5 steps, a start/stop window, a timed one
//   live_windows tail             100 steps, steps 40 and 70 sleep 50 ms (the injected slow steps)
//   live_windows loop SECONDS     steps until SECONDS pass (windows opened from outside; killed)
//   live_windows procs SECONDS    the loop in this process and in a child it starts (fork + exec)
//   live_windows detached N       N start/stop windows with 0.4 s of paused steps between (longer than
//                                 the tracer's detach grace, so CUPTI is detached and attached again for
//                                 each), then a timed window: record --paused without --step-range
//   live_windows second-device    device 0 alone until CUPTI was detached (0.5 s of steps), then device
//                                 1's first context and a start/stop window of 5 steps on it: the trace
//                                 must hold both devices' rows (2 GPUs needed; exit 2 with fewer)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

__global__ void tiny(int* p) { p[threadIdx.x] += 1; }

int* g_buffer = nullptr;
long g_launched = 0;

void launch(int kernels) {
  for (int i = 0; i < kernels; ++i) tiny<<<1, 32>>>(g_buffer);
  g_launched += kernels;
}

void step(int kernels, int sleep_ms = 0) {
  nvtxRangePushA("decode_step");
  launch(kernels);
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  cudaDeviceSynchronize();
  nvtxRangePop();
}

// `kernscope capture ARGS SESSION`; exits when the capture command fails.
void capture(const std::string& args) {
  const char* ks = std::getenv("KS");
  const char* session = std::getenv("KERNSCOPE_SESSION");
  if (!ks || !session) {
    std::fprintf(stderr, "live_windows: KS (the kernscope binary) and KERNSCOPE_SESSION must be set\n");
    std::exit(1);
  }
  const std::string command = std::string(ks) + " capture " + args + " " + session + " >&2";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "live_windows: %s failed\n", command.c_str());
    std::exit(1);
  }
}

void loop_for(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) step(4, 1);
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "windows";
  cudaMalloc(&g_buffer, 32 * sizeof(int));
  cudaMemset(g_buffer, 0, 32 * sizeof(int));
  cudaDeviceSynchronize();
  if (mode == "windows") {
    for (int i = 0; i < 20; ++i) step(4);
    capture("window --steps 5");
    long before = g_launched;
    for (int i = 0; i < 10; ++i) step(4);
    const long window1 = 5 * 4;  // the 5 steps after the request; the window closes as the 6th starts
    (void)before;
    capture("start");
    before = g_launched;
    for (int i = 0; i < 7; ++i) step(3);
    launch(2);  // outside any step, inside the window
    cudaDeviceSynchronize();
    const long window2 = g_launched - before;
    capture("stop");
    for (int i = 0; i < 5; ++i) step(4);
    capture("window --duration 0.3s");
    loop_for(0.6);
    for (int i = 0; i < 5; ++i) step(4);
    std::printf("{\"window_kernels\": [%ld, %ld], \"window_steps\": [5, 7], \"launched\": %ld}\n", window1, window2, g_launched);
  } else if (mode == "detached") {
    const int windows = argc > 2 ? std::atoi(argv[2]) : 6;
    for (int i = 0; i < 20; ++i) step(4);
    loop_for(0.4);
    std::string kernels, steps;
    for (int w = 0; w < windows; ++w) {
      capture("start");
      const long before = g_launched;
      for (int i = 0; i < 3 + w; ++i) step(3);
      launch(2);  // outside any step, inside the window
      cudaDeviceSynchronize();
      kernels += (w ? ", " : "") + std::to_string(g_launched - before);
      steps += (w ? ", " : "") + std::to_string(3 + w);
      capture("stop");
      loop_for(0.4);
    }
    capture("window --duration 0.3s");
    loop_for(0.6);
    std::printf("{\"window_kernels\": [%s], \"window_steps\": [%s], \"launched\": %ld}\n", kernels.c_str(), steps.c_str(), g_launched);
  } else if (mode == "second-device") {
    int devices = 0;
    cudaGetDeviceCount(&devices);
    if (devices < 2) {
      std::fprintf(stderr, "live_windows second-device: needs 2 GPUs, found %d\n", devices);
      return 2;
    }
    loop_for(0.5);  // longer than the tracer's detach grace: CUPTI is detached when device 1 starts
    cudaSetDevice(1);
    cudaMalloc(&g_buffer, 32 * sizeof(int));  // device 1's first context
    cudaMemset(g_buffer, 0, 32 * sizeof(int));
    cudaDeviceSynchronize();
    capture("start");
    const long before = g_launched;
    for (int i = 0; i < 5; ++i) step(3);
    const long inside = g_launched - before;
    capture("stop");
    std::printf("{\"devices\": %d, \"window_kernels\": [%ld], \"window_device\": 1, \"launched\": %ld}\n", devices, inside, g_launched);
  } else if (mode == "tail") {
    for (int i = 1; i <= 100; ++i) step(4, i == 40 || i == 70 ? 50 : 1);
    std::printf("{\"slow_steps\": [40, 70], \"steps\": 100}\n");
  } else if (mode == "loop") {
    loop_for(argc > 2 ? std::atof(argv[2]) : 3.0);
  } else if (mode == "procs") {
    const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
    const pid_t child = fork();
    if (child == 0) {
      execl("/proc/self/exe", argv[0], "loop", argv[2] ? argv[2] : "3", static_cast<char*>(nullptr));
      _exit(127);
    }
    loop_for(seconds);
    int status = 0;
    waitpid(child, &status, 0);
  }
  std::fflush(stdout);
  return 0;
}
