// copies: the `overlap-copies` what-if pair (issue 29, item 3). Each step brings a buffer of --mib MiB
// to the GPU and computes on it (a reduction that reads all of it, then --kernels kernels of --kernel-us).
//
//   copies before   synchronous cudaMemcpy H2D from PAGEABLE (malloc'd) memory on the legacy default
//                   stream, then the kernels on the same stream: the copy waits for the previous step's
//                   kernels and the kernels for the copy, step ~ copy (pageable speed) + compute
//   copies after    two PINNED host buffers (cudaMallocHost) and two device buffers; step i's copy is a
//                   cudaMemcpyAsync on its own copy stream into buffer i%2, the compute stream waits for it
//                   (event), so step i+1's copy overlaps step i's compute. The host keeps at most 2 steps
//                   in flight: at the start of step i it waits (cudaEventSynchronize) for the end of step
//                   i-2's compute, which also frees buffer i%2. Step ~ max(copy at pinned speed, compute)
//
// Steps are NVTX ranges "warmup:step" (--warmup) then "measure:step" (--steps). Prints STEP_MS = (wall of
// the measured loop, cudaDeviceSynchronize before and after) / steps, and checks the last step's sum.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 copies.cu -o copies
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "copies: %s failed: %s\n", #call, cudaGetErrorString(e_));   \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr int kBlocks = 264;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Sums the buffer's bytes (16 at a time); one partial sum per block.
__global__ void sum_kernel(const uint4* p, size_t n16, unsigned long long* partial) {
  unsigned long long s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n16; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) s += (w[j] & 0xff) + ((w[j] >> 8) & 0xff) + ((w[j] >> 16) & 0xff) + (w[j] >> 24);
  }
  __shared__ unsigned long long red[256];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = red[0];
}

// Each block spins for ns nanoseconds of GPU time, doing arithmetic on the sum.
__global__ void spin_kernel(unsigned long long ns, unsigned long long* partial, float* out) {
  const unsigned long long t0 = global_ns();
  float v = static_cast<float>(partial[blockIdx.x % kBlocks] & 0xff) + threadIdx.x * 1e-3f;
  while (global_ns() - t0 < ns) {
    for (int k = 0; k < 64; ++k) v = v * 0.9999f + 1e-4f;
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "before") && std::strcmp(argv[1], "after"))) {
    std::fprintf(stderr, "usage: copies before|after [--steps 40] [--warmup 5] [--mib 64] [--kernels 8] [--kernel-us 250]\n");
    return 2;
  }
  const bool after = std::strcmp(argv[1], "after") == 0;
  int steps = 40, warmup = 5, mib = 64, kernels = 8;
  double kernel_us = 250;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::atoi(argv[i + 1]);
    else if (a == "--warmup") warmup = std::atoi(argv[i + 1]);
    else if (a == "--mib") mib = std::atoi(argv[i + 1]);
    else if (a == "--kernels") kernels = std::atoi(argv[i + 1]);
    else if (a == "--kernel-us") kernel_us = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "copies: bad option %s\n", a.c_str()); return 2; }
  }
  const size_t bytes = size_t(mib) << 20;
  const unsigned long long ns = static_cast<unsigned long long>(kernel_us * 1000);
  // Host data: byte k is k % 251, in both host buffers.
  char* host[2] = {nullptr, nullptr};
  for (int b = 0; b < (after ? 2 : 1); ++b) {
    if (after) CHECK(cudaMallocHost(&host[b], bytes));
    else host[b] = static_cast<char*>(std::malloc(bytes));  // pageable on purpose
    if (!host[b]) return 1;
    for (size_t k = 0; k < bytes; ++k) host[b][k] = static_cast<char>(k % 251);
  }
  unsigned long long expected = 0;
  for (size_t k = 0; k < bytes; ++k) expected += k % 251;
  char* dev[2] = {nullptr, nullptr};
  for (auto& d : dev) CHECK(cudaMalloc(&d, bytes));
  unsigned long long* partial = nullptr;
  float* out = nullptr;
  CHECK(cudaMalloc(&partial, kBlocks * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&out, kBlocks * sizeof(float)));
  cudaStream_t copy_s, comp_s;
  CHECK(cudaStreamCreateWithFlags(&copy_s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&comp_s, cudaStreamNonBlocking));
  cudaEvent_t copied[2], done[2];
  for (auto& e : copied) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (auto& e : done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  auto compute = [&](const char* d, cudaStream_t s) {
    sum_kernel<<<kBlocks, 256, 0, s>>>(reinterpret_cast<const uint4*>(d), bytes / 16, partial);
    for (int k = 0; k < kernels; ++k) spin_kernel<<<132, 128, 0, s>>>(ns, partial, out);
    CHECK(cudaGetLastError());
  };
  auto run = [&](const char* name, int n) {
    for (int i = 0; i < n; ++i) {
      nvtxRangePushA(name);
      if (!after) {
        CHECK(cudaMemcpy(dev[0], host[0], bytes, cudaMemcpyHostToDevice));
        compute(dev[0], 0);
      } else {
        const int b = i % 2;
        if (i >= 2) CHECK(cudaEventSynchronize(done[b]));  // step i-2 has finished with buffer b
        CHECK(cudaMemcpyAsync(dev[b], host[b], bytes, cudaMemcpyHostToDevice, copy_s));
        CHECK(cudaEventRecord(copied[b], copy_s));
        CHECK(cudaStreamWaitEvent(comp_s, copied[b], 0));
        compute(dev[b], comp_s);
        CHECK(cudaEventRecord(done[b], comp_s));
      }
      nvtxRangePop();
    }
  };
  run("warmup:step", warmup);
  CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  run("measure:step", steps);
  CHECK(cudaDeviceSynchronize());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<unsigned long long> p(kBlocks);
  CHECK(cudaMemcpy(p.data(), partial, kBlocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  unsigned long long got = 0;
  for (auto v : p) got += v;
  std::printf("copies %s: %d steps, %d MiB %s H2D + %d kernels x %.0f us per step; STEP_MS=%.4f sum %s\n",
              after ? "after" : "before", steps, mib, after ? "pinned async (side stream)" : "pageable sync", kernels,
              kernel_us, ms / steps, got == expected ? "ok" : "WRONG");
  for (auto& d : dev) CHECK(cudaFree(d));
  for (int b = 0; b < 2; ++b) {
    if (after) CHECK(cudaFreeHost(host[b]));
    else std::free(host[b]);
  }
  return got == expected ? 0 : 1;
}
