// pageable_d2h: a step whose small device-to-host result copy into PAGEABLE memory blocks the host until
// the GPU is done, so the host's own work (standing for request preparation) cannot overlap the GPU (issue 46).
//
//   pageable_d2h before   launches --kernels kernels of --kernel-us each (about 4 ms of GPU), then
//                         cudaMemcpyAsync of the 704-byte result into malloc'd (pageable) memory: for a
//                         device-to-host copy into pageable memory the call returns only once the copy is
//                         done, i.e. after the step's kernels; then --host-us of CPU work in the NVTX range
//                         "prepare" (a busy loop, independent of the result). Host and GPU take turns:
//                         step ~ GPU + host (4 + 3 = 7 ms by default).
//   pageable_d2h after    the copy goes into one of two PINNED buffers (cudaMallocHost) with cudaMemcpyAsync,
//                         followed by an event; the host reads step i's result only after it has launched
//                         step i+1 (cudaEventSynchronize on step i's event: at most 2 steps in flight), then
//                         does the same "prepare" work while the GPU runs step i+1: step ~ max(GPU, host)
//                         (4 ms, GPU-bound, by default).
//
// Steps are NVTX ranges "warmup" (--warmup of them) then "step" (--steps), each with a nested "prepare".
// The kernels are --blocks blocks spinning on %globaltimer (a kernel's length does not depend on the clocks);
// the last one writes the step's 176-float (704-byte) result, a function of the step number alone, so the
// two variants' checksums must agree. Truth (the program's own clock): STEP_MS = wall of the measured loop
// (cudaDeviceSynchronize before and after) / steps, and STEP_MEDIAN_MS, the median of `steps` host intervals
// (steady_clock) between step ends: the first runs from the loop's start to step 1's end (steps 0 and 1), the
// last from step steps-1's end to the final synchronization (the drain); they sum to the loop's wall;
// --json PATH writes them (step_ms_each).
// Build: nvcc -O2 -std=c++17 -arch=sm_90 pageable_d2h.cu -o pageable_d2h
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "pageable_d2h: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

constexpr int kResultFloats = 176;  // 704 bytes

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each block spins for ns nanoseconds of GPU time doing arithmetic; block b writes out[b] (when b is below
// n_out) a value that depends on the step alone (the spin's arithmetic only keeps it from being removed).
__global__ void spin_kernel(unsigned long long ns, int step, float* out, int n_out) {
  const unsigned long long t0 = global_ns();
  float v = threadIdx.x * 1e-3f;
  while (global_ns() - t0 < ns) {
    for (int k = 0; k < 64; ++k) v = v * 0.9999f + 1e-4f;
  }
  if (threadIdx.x == 0 && blockIdx.x < n_out) out[blockIdx.x] = static_cast<float>(step % 1000) + 0.001f * blockIdx.x + (v == -1.f ? 1.f : 0.f);
}

static void busy_host(double us) {
  const auto t0 = std::chrono::steady_clock::now();
  volatile double x = 0;
  while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) x = x + 1;
}

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "before") && std::strcmp(argv[1], "after"))) {
    std::fprintf(stderr,
                 "usage: pageable_d2h before|after [--steps 40] [--warmup 3] [--kernels 4] [--kernel-us 1000] "
                 "[--host-us 3000] [--blocks 176] [--json PATH]\n");
    return 2;
  }
  const bool after = std::strcmp(argv[1], "after") == 0;
  int steps = 40, warmup = 3, kernels = 4, blocks = kResultFloats;
  double kernel_us = 1000, host_us = 3000;
  std::string json;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::atoi(argv[i + 1]);
    else if (a == "--warmup") warmup = std::atoi(argv[i + 1]);
    else if (a == "--kernels") kernels = std::atoi(argv[i + 1]);
    else if (a == "--kernel-us") kernel_us = std::atof(argv[i + 1]);
    else if (a == "--host-us") host_us = std::atof(argv[i + 1]);
    else if (a == "--blocks") blocks = std::atoi(argv[i + 1]);
    else if (a == "--json") json = argv[i + 1];
    else { std::fprintf(stderr, "pageable_d2h: bad option %s\n", a.c_str()); return 2; }
  }
  if (steps < 1 || kernels < 1 || blocks < kResultFloats) { std::fprintf(stderr, "pageable_d2h: bad sizes\n"); return 2; }

  float* d_out = nullptr;
  CHECK(cudaMalloc(&d_out, blocks * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t bytes = kResultFloats * sizeof(float);
  // before: one pageable buffer; after: two pinned buffers and their events.
  float* pageable = static_cast<float*>(std::malloc(bytes));
  float* pinned[2] = {nullptr, nullptr};
  cudaEvent_t copied[2];
  if (after) {
    for (auto& p : pinned) CHECK(cudaMallocHost(&p, bytes));
    for (auto& e : copied) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  const unsigned long long ns = static_cast<unsigned long long>(kernel_us * 1000);
  double checksum = 0;
  auto consume = [&](const float* r) {
    for (int k = 0; k < kResultFloats; ++k) checksum += r[k];
  };
  auto launch = [&](int step) {
    for (int k = 0; k < kernels; ++k) spin_kernel<<<blocks, 128, 0, s>>>(ns, step, d_out, k + 1 == kernels ? kResultFloats : 0);
    CHECK(cudaGetLastError());
  };

  // One phase of n steps; step numbers continue from `first` (the result depends on them).
  auto run = [&](const char* name, int first, int n, std::vector<double>* each) {
    auto prev = std::chrono::steady_clock::now();
    for (int j = 0; j < n; ++j) {
      const int step = first + j;
      nvtxRangePushA(name);
      launch(step);
      if (!after) {
        CHECK(cudaMemcpyAsync(pageable, d_out, bytes, cudaMemcpyDeviceToHost, s));  // returns once copied
        nvtxRangePushA("prepare");
        busy_host(host_us);
        nvtxRangePop();
        consume(pageable);
      } else {
        CHECK(cudaMemcpyAsync(pinned[step % 2], d_out, bytes, cudaMemcpyDeviceToHost, s));
        CHECK(cudaEventRecord(copied[step % 2], s));
        if (j > 0) {  // the previous step's result, now that this step is launched
          CHECK(cudaEventSynchronize(copied[(step - 1) % 2]));
          consume(pinned[(step - 1) % 2]);
        }
        nvtxRangePushA("prepare");
        busy_host(host_us);
        nvtxRangePop();
      }
      nvtxRangePop();
      if (each && j > 0) {
        const auto now = std::chrono::steady_clock::now();
        each->push_back(std::chrono::duration<double, std::milli>(now - prev).count());
        prev = now;
      }
    }
    if (after && n > 0) {  // the phase's last result
      CHECK(cudaEventSynchronize(copied[(first + n - 1) % 2]));
      consume(pinned[(first + n - 1) % 2]);
    }
    CHECK(cudaDeviceSynchronize());
    if (each) {
      const auto now = std::chrono::steady_clock::now();
      each->push_back(std::chrono::duration<double, std::milli>(now - prev).count());
    }
  };

  run("warmup", 0, warmup, nullptr);
  CHECK(cudaDeviceSynchronize());
  checksum = 0;
  std::vector<double> each;
  const auto t0 = std::chrono::steady_clock::now();
  run("step", warmup, steps, &each);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double step_ms = ms / steps, med = median(each);
  std::printf("pageable_d2h %s: %d steps, %d kernels x %.0f us GPU + %.0f us host per step; STEP_MS=%.4f "
              "STEP_MEDIAN_MS=%.4f (checksum %.3f)\n",
              after ? "after" : "before", steps, kernels, kernel_us, host_us, step_ms, med, checksum);
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) { std::perror(json.c_str()); return 1; }
    std::fprintf(f, "{\"program\": \"pageable_d2h\", \"variant\": \"%s\", \"steps\": %d, \"warmup\": %d, \"kernels\": %d, "
                    "\"kernel_us\": %.1f, \"host_us\": %.1f, \"step_ms\": %.4f, \"step_ms_median\": %.4f, \"checksum\": %.3f, "
                    "\"step_ms_each\": [",
                 after ? "after" : "before", steps, warmup, kernels, kernel_us, host_us, step_ms, med, checksum);
    for (size_t i = 0; i < each.size(); ++i) std::fprintf(f, "%s%.4f", i ? ", " : "", each[i]);
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  std::free(pageable);
  if (after) for (auto p : pinned) CHECK(cudaFreeHost(p));
  CHECK(cudaFree(d_out));
  return 0;
}
