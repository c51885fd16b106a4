// What the native stack sampler (src/tracer/native_sampler.*) costs a program: a fixed CPU workload
// on T threads, each spending its time 24 calls deep (so each sample unwinds a realistic stack),
// timed whole with the sampler off, at 100 Hz and at 1000 Hz, interleaved round by round (the order
// rotates), R rounds. Prints each run's wall time, the ratio to the off run of the same round, and
// the sampler's own account (sampler_busy_share: its thread's CPU time plus every handler's time per
// second of the run, one CPU = 1). Results: bench/RESULTS.md.
//
// usage: native_sampler_cost [THREADS=2] [ROUNDS=5] [WORK_MS=1500]
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tracer/native_sampler.hpp"

namespace {

double now_s() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Arithmetic at the bottom of a chain of calls (the depth a sample unwinds).
__attribute__((noinline)) unsigned long long leaf(unsigned long long x, long n) {
  for (long i = 0; i < n; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}
__attribute__((noinline)) unsigned long long deep(int depth, unsigned long long x, long n) {
  if (depth == 0) return leaf(x, n);
  const unsigned long long r = deep(depth - 1, x + static_cast<unsigned long long>(depth), n);
  return r ^ static_cast<unsigned long long>(depth);  // work after the call: no tail call
}

// The same fixed work on each thread: `chunks` calls 24 deep.
double run_workload(int threads, long chunks) {
  std::vector<std::thread> pool;
  std::vector<unsigned long long> out(static_cast<std::size_t>(threads));
  const double start = now_s();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&out, t, chunks] {
      unsigned long long x = static_cast<unsigned long long>(t) + 1;
      for (long c = 0; c < chunks; ++c) x = deep(24, x, 20000);
      out[static_cast<std::size_t>(t)] = x;
    });
  }
  for (auto& th : pool) th.join();
  const double wall = now_s() - start;
  unsigned long long sink = 0;
  for (auto v : out) sink ^= v;
  if (sink == 42) std::printf("(unlikely)\n");
  return wall;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const double work_ms = argc > 3 ? std::atof(argv[3]) : 1500;
  if (threads < 1 || rounds < 1 || work_ms <= 0) {
    std::fprintf(stderr, "usage: native_sampler_cost [THREADS>=1] [ROUNDS>=1] [WORK_MS>0]\n");
    return 2;
  }
  // Calibrate the chunk count to about WORK_MS per thread when nothing samples.
  long chunks = 16;
  for (double wall = run_workload(1, chunks); wall < 0.2; wall = run_workload(1, chunks)) chunks *= 2;
  chunks = std::max(1L, static_cast<long>(static_cast<double>(chunks) * work_ms / 1000.0 / run_workload(1, chunks)));
  std::printf("threads %d, rounds %d, %ld chunks per thread (about %.0f ms each alone)\n", threads, rounds, chunks, work_ms);
  const double rates[] = {0, 100, 1000};
  std::vector<std::vector<double>> wall(3);
  for (int r = 0; r < rounds; ++r) {
    std::printf("round %d:", r + 1);
    double round_wall[3] = {0, 0, 0};
    std::string shares;
    for (int k = 0; k < 3; ++k) {
      const int m = (k + r) % 3;  // rotate the order
      kernscope::tracer::NativeSampler sampler(kernscope::tracer::NativeSamplerOptions{.hz = rates[m] > 0 ? rates[m] : 1});
      if (rates[m] > 0 && !sampler.start()) {
        std::fprintf(stderr, "sampler: %s\n", sampler.why().c_str());
        return 1;
      }
      round_wall[m] = run_workload(threads, chunks);
      if (rates[m] > 0) {
        sampler.stop();
        for (const auto& [key, value] : sampler.info()) {
          if (key == "sampler_busy_share" || key == "sampler_hz_achieved" || key == "sampler_lowered") {
            shares.append(" ").append(std::to_string(static_cast<int>(rates[m]))).append("Hz:");
            shares.append(key.substr(8)).append("=").append(value);
          }
        }
      }
    }
    for (int m = 0; m < 3; ++m) wall[m].push_back(round_wall[m]);
    std::printf(" off %.3f s, 100 Hz %.3f s (x%.3f), 1000 Hz %.3f s (x%.3f);%s\n", round_wall[0], round_wall[1],
                round_wall[1] / round_wall[0], round_wall[2], round_wall[2] / round_wall[0], shares.c_str());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("median: off %.3f s, 100 Hz %.3f s (x%.3f), 1000 Hz %.3f s (x%.3f)\n", median(wall[0]), median(wall[1]),
              median(wall[1]) / median(wall[0]), median(wall[2]), median(wall[2]) / median(wall[0]));
  return 0;
}
