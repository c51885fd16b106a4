// native_host_busy: a CUDA C++ program whose launching thread spends known host time in each step,
// for `kernscope record --sample cpu` (native stacks; bench/gpu/native_sampler_check.sh). Each step
// (NVTX range "host_step") launches one tiny kernel, spins on the clock 6 ms in host_work_six and
// 3 ms in host_work_three, then waits for the GPU. The program prints what it measured itself:
// `kernscope host` should give those functions the same time per step.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void tiny(float* x) { x[threadIdx.x] += 1.0f; }

using Clock = std::chrono::steady_clock;

// Different bodies, so the compiler cannot fold them into one function.
__attribute__((noinline)) long host_work_six(double ms) {
  long rounds = 0;
  for (auto end = Clock::now() + std::chrono::duration<double, std::milli>(ms); Clock::now() < end;) rounds += 1;
  return rounds;
}
__attribute__((noinline)) long host_work_three(double ms) {
  long rounds = 0;
  for (auto end = Clock::now() + std::chrono::duration<double, std::milli>(ms); Clock::now() < end;) rounds += 5;
  return rounds;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  float* x = nullptr;
  if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) return 1;
  double six_ms = 0, three_ms = 0, step_ms = 0;
  volatile long sink = 0;
  for (int i = 0; i < steps; ++i) {
    nvtxRangePushA("host_step");
    const auto a = Clock::now();
    tiny<<<1, 32>>>(x);
    const auto b = Clock::now();
    sink = sink + host_work_six(6.0);
    const auto c = Clock::now();
    sink = sink + host_work_three(3.0);
    const auto d = Clock::now();
    cudaDeviceSynchronize();
    const auto e = Clock::now();
    nvtxRangePop();
    six_ms += std::chrono::duration<double, std::milli>(c - b).count();
    three_ms += std::chrono::duration<double, std::milli>(d - c).count();
    step_ms += std::chrono::duration<double, std::milli>(e - a).count();
  }
  cudaFree(x);
  std::printf("measured per step: host_work_six %.3f ms, host_work_three %.3f ms, step %.3f ms (%d steps)\n",
              six_ms / steps, three_ms / steps, step_ms / steps, steps);
  return 0;
}
