// The speed of copies between pinned host memory and the GPU, for data/whatif_calibration.tsv:
// 64 MiB host-to-device and device-to-host cudaMemcpyAsync from cudaMallocHost buffers, timed with
// CUDA events, 5 warm-up and 30 measured copies each way; prints the median GB/s (10^9 B/s) and
// the range. Independent of the what-if pairs (its own program, its own buffers).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));            \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main() {
  const size_t bytes = size_t{64} << 20;
  void *host = nullptr, *device = nullptr;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&device, bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  for (int dir = 0; dir < 2; ++dir) {
    std::vector<double> gbs;
    for (int i = 0; i < 35; ++i) {
      CHECK(cudaEventRecord(a, stream));
      if (dir == 0) CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
      else CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
      CHECK(cudaEventRecord(b, stream));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (i >= 5) gbs.push_back(static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
    }
    std::sort(gbs.begin(), gbs.end());
    std::printf("%s\t%s\tmedian %.1f GB/s\tmin %.1f\tmax %.1f\t(64 MiB x %zu)\n", prop.name, dir == 0 ? "pinned_h2d" : "pinned_d2h",
                gbs[gbs.size() / 2], gbs.front(), gbs.back(), gbs.size());
  }
  return 0;
}
