#!/usr/bin/env bash
# Runs the benchmarks that need no GPU: the in-process Google Benchmark suite and the comparison of
# kernscope with the bare SQLite scan on the bundled export. The comparison with nsys runs on a GPU
# machine, where nsys is available (.gpu/bench_gpu.sh; figures in bench/RESULTS.md).
set -eu
K=$1
B=$(dirname "$K")/../../bench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
xz -dc tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz >"$T/llama.sqlite"
KERNSCOPE_BENCH_TRACE="$T/llama.sqlite" "$B/bench_stats" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
for i in 1 2 3; do
  /usr/bin/time -f "kernscope stats (4 reports): %e s, peak RSS %M KB" "$K" stats -r cuda_gpu_kern_sum -r cuda_api_sum \
    -r cuda_gpu_mem_time_sum -r nvtx_sum --format csv "$T/llama.sqlite" >/dev/null
  "$B/sqlite_scan_floor" "$T/llama.sqlite"
done
