// What a tracer costs per kernel launch, where launches are the bottleneck.
//
//   launch_cost eager N REPS      N launches of an empty kernel from the host, synchronized at the end
//   launch_cost graph N REPS      N/32 replays of a CUDA graph of 32 empty kernels
//   launch_cost eager-ab N REPS   as eager (graph-ab as graph), each repetition run twice: once
//   launch_cost graph-ab N REPS   untraced, once between cudaProfilerStart and cudaProfilerStop
//
// Prints the median over REPS of nanoseconds per kernel (host wall time / kernels), after a warm-up
// repetition. Run it with and without a tracer, interleaved: the difference is the tracer's cost per
// kernel on a path where nothing else hides it (an empty kernel runs shorter than its launch). The
// -ab forms, under a tracer that records only between cudaProfilerStart/Stop, measure both in one
// process, alternating, so the machine's drift between processes cancels out.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

struct Workload {
  bool graph = false;
  long n = 0;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t exec = nullptr;
  static constexpr int kNodes = 32;

  long kernels() const { return graph ? n / kNodes * kNodes : n; }
  double run_ns_per_kernel() const {
    const auto t0 = std::chrono::steady_clock::now();
    if (graph) {
      for (long i = 0; i < n / kNodes; ++i) check(cudaGraphLaunch(exec, stream), "graph launch");
    } else {
      for (long i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, stream>>>(nullptr);
    }
    check(cudaStreamSynchronize(stream), "sync");
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / kernels();
  }
};

static void print(const char* label, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%s ns_per_kernel=%.1f min=%.1f max=%.1f\n", label, v[v.size() / 2], v.front(), v.back());
}

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[1] : "";
  if (mode != "eager" && mode != "graph" && mode != "eager-ab" && mode != "graph-ab") {
    std::fprintf(stderr, "usage: launch_cost eager|graph|eager-ab|graph-ab N REPS\n");
    return 2;
  }
  const bool ab = mode.ends_with("-ab");
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
  std::vector<double> plain, traced;
  for (int r = 0; r < reps; ++r) {
    plain.push_back(w.run_ns_per_kernel());
    if (!ab) continue;
    check(cudaProfilerStart(), "profiler start");
    traced.push_back(w.run_ns_per_kernel());
    check(cudaProfilerStop(), "profiler stop");
  }
  const std::string label = w.graph ? "graph" : "eager";
  print(ab ? (label + " untraced").c_str() : label.c_str(), plain);
  if (ab) {
    print((label + " traced").c_str(), traced);
    std::vector<double> diff;
    for (std::size_t i = 0; i < plain.size(); ++i) diff.push_back(traced[i] - plain[i]);
    print((label + " cost").c_str(), diff);
  }
  return 0;
}
