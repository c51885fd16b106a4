// blocked: 30 steps, each in an NVTX range "step": a short kernel, then cudaLaunchHostFunc with a host
// callback that sleeps 5 ms (the stream, hence the GPU, waits on the host), then cudaStreamSynchronize.
// Expected accounting: bottleneck blocked (blocked.cudaStreamSynchronize).
// Build: nvcc -O2 -std=c++17 -arch=sm_90 blocked.cu -o blocked
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "blocked: %s failed: %s\n", #call, cudaGetErrorString(e_));       \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// About 20 us of arithmetic on one block.
__global__ void short_kernel(float* p, int iters) {
  float v = p[threadIdx.x];
  for (int i = 0; i < iters; ++i) v = v * 0.999f + 0.001f;
  p[threadIdx.x] = v;
}

static void CUDART_CB sleep_5ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); }

int main() {
  const int steps = 30;
  float* dev = nullptr;
  CHECK(cudaMalloc(&dev, 1024 * sizeof(float)));
  CHECK(cudaMemset(dev, 0, 1024 * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  double total_ms = 0;
  for (int i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    nvtxRangePushA("step");
    short_kernel<<<1, 256, 0, s>>>(dev, 20000);
    CHECK(cudaGetLastError());
    CHECK(cudaLaunchHostFunc(s, sleep_5ms, nullptr));
    CHECK(cudaStreamSynchronize(s));
    nvtxRangePop();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) total_ms += ms;
  }
  std::printf("blocked: %d steps, %.3f ms per step after the first (5 ms of it in the host callback)\n", steps,
              total_ms / (steps - 1));
  CHECK(cudaFree(dev));
  return 0;
}
