// copy_bound: 30 steps, each in an NVTX range "step", copying 256 MiB host->device from PAGEABLE
// (malloc'd) memory with cudaMemcpyAsync, then one tiny kernel, then cudaStreamSynchronize.
// Expected accounting: bottleneck copy (copy.h2d), pageable share > 0.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 copy_bound.cu -o copy_bound
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "copy_bound: %s failed: %s\n", #call, cudaGetErrorString(e_));    \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void tiny(float* p) {
  if (threadIdx.x == 0) p[0] += 1.0f;
}

int main() {
  const size_t bytes = size_t(256) << 20;
  const int steps = 30;
  char* host = static_cast<char*>(std::malloc(bytes));  // pageable on purpose
  if (!host) return 1;
  std::memset(host, 1, bytes);  // touch every page before the loop
  void* dev = nullptr;
  CHECK(cudaMalloc(&dev, bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  double total_ms = 0;
  for (int i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    nvtxRangePushA("step");
    CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
    tiny<<<1, 32, 0, s>>>(static_cast<float*>(dev));
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    nvtxRangePop();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) total_ms += ms;
  }
  std::printf("copy_bound: %d steps, %.1f MiB pageable H2D each, %.3f ms per step after the first (%.2f GB/s)\n", steps,
              bytes / 1048576.0, total_ms / (steps - 1), bytes / (total_ms / (steps - 1) * 1e6));
  CHECK(cudaFree(dev));
  std::free(host);
  return 0;
}
