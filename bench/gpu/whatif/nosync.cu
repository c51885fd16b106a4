// nosync: the `no-sync` what-if pair (issue 29, item 3). Each step does what a serving loop does:
// host work first (a CPU busy loop standing for Python/scheduler work), then the step's kernels, then
// (before) a blocking cudaStreamSynchronize, as a loop that reads each step's result on the host does.
//
//   nosync before   host work -> launches -> cudaStreamSynchronize: host and GPU take turns,
//                   step ~ host + GPU (1.5 + 2.0 ms by default)
//   nosync after    no per-step sync; the host keeps at most 2 steps in flight: at the start of step i
//                   it waits (cudaEventSynchronize) for the event recorded at the end of step i-2;
//                   host and GPU overlap, step ~ max(host, GPU) (2.0 ms, GPU-bound, by default)
//
// Steps are NVTX ranges "warmup:step" (--warmup of them) then "measure:step" (--steps). The GPU work is
// --kernels kernels of --kernel-us each (132 blocks spinning on %globaltimer, so a kernel's length does not
// depend on the clocks); the host work is a busy loop of --host-us on the steady clock. Prints
// STEP_MS = (wall of the measured loop, cudaDeviceSynchronize before and after) / steps.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 nosync.cu -o nosync
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "nosync: %s failed: %s\n", #call, cudaGetErrorString(e_));   \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each block spins for ns nanoseconds of GPU time, doing arithmetic, then writes one value.
__global__ void spin_kernel(unsigned long long ns, float* out) {
  const unsigned long long t0 = global_ns();
  float v = threadIdx.x * 1e-3f;
  while (global_ns() - t0 < ns) {
    for (int k = 0; k < 64; ++k) v = v * 0.9999f + 1e-4f;
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

static void busy_host(double us) {
  const auto t0 = std::chrono::steady_clock::now();
  volatile double x = 0;
  while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) x = x + 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "before") && std::strcmp(argv[1], "after"))) {
    std::fprintf(stderr, "usage: nosync before|after [--steps 60] [--warmup 10] [--kernels 16] [--kernel-us 125] [--host-us 1500]\n");
    return 2;
  }
  const bool after = std::strcmp(argv[1], "after") == 0;
  int steps = 60, warmup = 10, kernels = 16;
  double kernel_us = 125, host_us = 1500;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::atoi(argv[i + 1]);
    else if (a == "--warmup") warmup = std::atoi(argv[i + 1]);
    else if (a == "--kernels") kernels = std::atoi(argv[i + 1]);
    else if (a == "--kernel-us") kernel_us = std::atof(argv[i + 1]);
    else if (a == "--host-us") host_us = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "nosync: bad option %s\n", a.c_str()); return 2; }
  }
  const int blocks = 132;
  float* out = nullptr;
  CHECK(cudaMalloc(&out, blocks * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t done[2];
  for (auto& e : done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  const unsigned long long ns = static_cast<unsigned long long>(kernel_us * 1000);

  auto run = [&](const char* name, int n) {
    for (int i = 0; i < n; ++i) {
      nvtxRangePushA(name);
      if (after && i >= 2) CHECK(cudaEventSynchronize(done[i % 2]));  // step i-2 has finished
      busy_host(host_us);
      for (int k = 0; k < kernels; ++k) spin_kernel<<<blocks, 128, 0, s>>>(ns, out);
      CHECK(cudaGetLastError());
      if (after) CHECK(cudaEventRecord(done[i % 2], s));
      else CHECK(cudaStreamSynchronize(s));
      nvtxRangePop();
    }
  };
  run("warmup:step", warmup);
  CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  run("measure:step", steps);
  CHECK(cudaDeviceSynchronize());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float check = 0;
  CHECK(cudaMemcpy(&check, out, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("nosync %s: %d steps, %d kernels x %.0f us GPU + %.0f us host per step; STEP_MS=%.4f (check %.3f)\n",
              after ? "after" : "before", steps, kernels, kernel_us, host_us, ms / steps, check);
  CHECK(cudaFree(out));
  return 0;
}
