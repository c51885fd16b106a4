#!/usr/bin/env bash
# Runs on the GPU host: builds tests/fixtures/nsys/gaps_memset_sync/workload.cu (a program whose trace
# triggers nsys analyze's gpu_gaps and cuda_memset_sync rules), records it with nsys
# (--trace=cuda,nvtx), and stores the SQLite export as that fixture's trace.sqlite.gz. Its gold is then
# collected like every fixture's: bench/gpu/gold_collect.sh gaps_memset_sync.
# Prints the GPU, driver, CUDA and nsys versions for the fixture's provenance row.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
source "$here/gold_nsys_env.sh"
export PATH=$PATH:/usr/local/cuda/bin  # nvcc, where CUDA is not on PATH
fixture=$repo/tests/fixtures/nsys/gaps_memset_sync
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
"$NSYS" --version
nvcc -O2 -arch=sm_90 "$fixture/workload.cu" -o "$work/app"
"$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o "$work/gaps_memset" "$work/app"
"$NSYS" export --type sqlite --force-overwrite=true -o "$work/gaps_memset.sqlite" "$work/gaps_memset.nsys-rep"
# -n: no name or time in the gzip header, so the same export compresses to the same bytes.
gzip -9 -n -c "$work/gaps_memset.sqlite" > "$fixture/trace.sqlite.xz"
ls -l "$fixture/trace.sqlite.xz"
