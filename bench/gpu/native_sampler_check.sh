#!/bin/bash
# issue 19, native stacks: `kernscope record --sample cpu` on programs that are not Python.
#   1. native_host_busy (a known-truth program): `kernscope host` should give host_work_six and
#      host_work_three the time per step the program measured itself (printed first), 6 and 3 ms
#      nominal, on the launching thread;
#   2. the same binary stripped: those frames become module offsets flagged unresolved (a note says so);
#   3. examples/decode_bench, eager (graphs off): the launching thread's time by native function
#      (cudaLaunchKernel / cuBLAS inside libcudart, libcublas, libcuda), the sampler's cost in the notes;
#   4. a Python program that starts CUDA (torch): Python stacks from the hook only, no native sampler
#      (no KERNSCOPE_HOST_INFO row "sampler" = native ...).
# Also prints KERNSCOPE_HOST_INFO of each file.
#
# usage: bench/gpu/native_sampler_check.sh OUT_DIR   (repository root, GPU machine, binaries under .gpu/
#        as for the other scripts: tracer_env.sh)
source "$(dirname "$0")/tracer_env.sh"
if [ $# -ne 1 ]; then awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" >&2; exit 2; fi
OUT=$1
mkdir -p "$OUT"
nvcc -O2 -std=c++17 -arch=sm_90 -lineinfo $R/bench/gpu/native_host_busy.cu -o "$OUT/native_host_busy" || exit 1
cp "$OUT/native_host_busy" "$OUT/native_host_busy_stripped" && strip --strip-all "$OUT/native_host_busy_stripped"
nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o "$OUT/decode_bench" || exit 1
info() { q "$1" "SELECT name, substr(value, 1, 120) FROM KERNSCOPE_HOST_INFO"; }
for prog in native_host_busy native_host_busy_stripped; do
  echo "== $prog under record --sample cpu:200"
  $K record --sample cpu:200 -o "$OUT/$prog.sqlite" -- "$OUT/$prog" 200 2>&1 | grep -v "^$" | cut -c1-240
  $K host --step-range host_step --limit 8 "$OUT/$prog.sqlite" 2>&1 | cut -c1-240
  info "$OUT/$prog.sqlite"
done
echo "== decode_bench, eager, under record --sample cpu (100 Hz)"
$K record --sample cpu -o "$OUT/decode_bench.sqlite" -- "$OUT/decode_bench" --iters 2 --warmup 1 --cuda-graph off 2>&1 \
  | grep -i "tpot\|wrote\|sample\|native" | cut -c1-240
$K host --limit 12 "$OUT/decode_bench.sqlite" 2>&1 | cut -c1-240
info "$OUT/decode_bench.sqlite"
$K host --format collapsed "$OUT/decode_bench.sqlite" 2>/dev/null | sort -t' ' -k2 -nr | head -3 | cut -c1-300
echo "== a Python program starting CUDA: the Python hook samples it, the native sampler must not"
$K record --sample cpu -o "$OUT/py.sqlite" -- python3 -c "import torch, time; x = torch.ones(1024, device='cuda'); t = time.time()
while time.time() - t < 1: x = x * 1.0001
torch.cuda.synchronize()" 2>&1 | grep -v "^$" | cut -c1-240
q "$OUT/py.sqlite" "SELECT name, substr(value, 1, 60) FROM KERNSCOPE_HOST_INFO WHERE name IN ('sampler', 'native_frames', 'sampler_hz_achieved')"
