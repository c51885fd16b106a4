#!/bin/bash
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
export PATH=$(dirname "$NSYS"):$PATH
export LD_LIBRARY_PATH=$R/.gpu/lib:$LD_LIBRARY_PATH
K=$R/.gpu/bin/kernscope
cd /tmp
nvcc -O2 -std=c++17 -arch=sm_90 $R/.gpu/decode_bench.cu -lcublas -o /tmp/db || exit 1
A="--layers 2 --iters 2 --warmup 1 --output-len 16 --prompt-len 128"
echo "== 3. --backend nsys"
timeout 200 $K record --backend nsys -o /tmp/viansys -- /tmp/db $A 2>&1 | tail -3
$K stats -r cuda_gpu_kern_sum /tmp/viansys.sqlite | head -6
echo "== 4b. SIGTERM forwarded through record"
timeout -s TERM 3 $K record -o /tmp/term.sqlite -- /tmp/db --layers 2 --iters 200 --output-len 64 --prompt-len 128 > /tmp/term.out 2>&1; echo "rc=$?"; tail -3 /tmp/term.out
echo "== 5. PyTorch profiler inside"
PROMPT=64 GEN=8 TORCHPROF=/tmp/tp.json timeout 200 $K record -o /tmp/tp.sqlite -- python3 $R/.gpu/tools/llama_decode_workload.py 2>&1 | grep -v ERROR | tail -4
$K info /tmp/tp.sqlite | tail -4
