#!/bin/bash
# Run on a GPU machine (nsys there: ../shared/GPU.md) from the repository root, with the shared
# tools copied to .gpu/tools and kernscope's binaries (kernscope, sqlite_scan_floor, bench_stats)
# in .gpu/bin with their shared libraries in .gpu/lib. Prints the figures of bench/RESULTS.md's
# `kernscope stats` vs `nsys stats` section.
#
# usage: bench/gpu/run_compare.sh [REPS_LLAMA [REPS_BIG [BIG_GB]]]
#   REPS_LLAMA  interleaved repetitions on the llama export (11)
#   REPS_BIG    repetitions on the large export made from it by bench/make_big_export.py (3)
#   BIG_GB      the large export's size in GB (1.05)
set -e
REPS_LLAMA=${1:-11}
REPS_BIG=${2:-3}
BIG_GB=${3:-1.05}
source .gpu/tools/gpu-nsys-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/.gpu/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; "$NSYS" --version; date -u
xz -dc tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz > /tmp/llama.sqlite
KERNSCOPE_BENCH_TRACE=/tmp/llama.sqlite .gpu/bin/bench_stats --benchmark_filter=OpenAnd --benchmark_repetitions=5 --benchmark_report_aggregates_only=true | grep median
python3 bench/compare_nsys.py --nsys "$NSYS" --kernscope .gpu/bin/kernscope --floor .gpu/bin/sqlite_scan_floor --trace /tmp/llama.sqlite --reps "$REPS_LLAMA"
python3 bench/make_big_export.py /tmp/llama.sqlite /tmp/big.sqlite "$BIG_GB" | tail -1
python3 bench/compare_nsys.py --nsys "$NSYS" --kernscope .gpu/bin/kernscope --floor .gpu/bin/sqlite_scan_floor --trace /tmp/big.sqlite --reps "$REPS_BIG"
