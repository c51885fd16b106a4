#!/bin/bash
# Capture ranges, nsys backend, a killed program, CUPTI held by the PyTorch profiler.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
export PATH=$(dirname "$NSYS"):$PATH
cd /tmp
nvcc -O2 -std=c++17 -arch=sm_90 $R/.gpu/decode_bench.cu -lcublas -o /tmp/db || exit 1
A="--layers 2 --iters 2 --warmup 1 --output-len 16 --prompt-len 128"
echo "== 1. cudaProfilerApi (measured iterations only: expect 2 prefills, 32 decode steps)"
timeout 100 $K record --capture-range cudaProfilerApi --capture-range-end repeat -o /tmp/cap.sqlite -- /tmp/db $A --cuda-profiler-capture --cuda-graph off 2>&1 | tail -2
$K stats -r nvtx_sum -f csv /tmp/cap.sqlite
echo "== 2. nvtx:measure:prefill (expect only the first measured prefill with stop)"
timeout 100 $K record --capture-range nvtx:measure:prefill -o /tmp/nv.sqlite -- /tmp/db $A --cuda-graph off 2>&1 | tail -1
$K stats -r nvtx_sum -f csv /tmp/nv.sqlite; $K info /tmp/nv.sqlite | grep -A3 Events
echo "== 3. --backend nsys"
timeout 200 $K record --backend nsys -o /tmp/viansys -- /tmp/db $A 2>&1 | tail -3
$K stats -r cuda_gpu_kern_sum /tmp/viansys.sqlite | head -6
echo "== 4. killed mid-run (SIGKILL after 3 s): the file keeps what was flushed"
(timeout -s KILL 3 $K record -o /tmp/killed.sqlite -- /tmp/db --layers 2 --iters 200 --output-len 64 --prompt-len 128 > /dev/null 2>&1); echo "rc=$?"
sleep 1; ls -la /tmp/killed.sqlite*; $K info /tmp/killed.sqlite 2>&1 | grep -A3 "Events\|error"
echo "== 4b. program killed by SIGTERM forwarded through record"
timeout -s TERM 3 $K record -o /tmp/term.sqlite -- /tmp/db --layers 2 --iters 200 --output-len 64 --prompt-len 128 2>&1 | tail -2; echo "rc=$?"
$K info /tmp/term.sqlite 2>&1 | grep -A2 "Events\|error"
echo "== 5. PyTorch profiler inside (CUPTI contention): must not hang or crash"
PROMPT=64 GEN=8 TORCHPROF=/tmp/tp.json timeout 200 $K record -o /tmp/tp.sqlite -- python3 $R/.gpu/tools/llama_decode_workload.py 2>&1 | tail -4; echo "rc=$?"
ls -la /tmp/tp.json /tmp/tp.sqlite 2>&1
echo "== 6. exit status passes through"
timeout 60 $K record -o /tmp/x.sqlite -- python3 -c "import torch; torch.ones(1,device='cuda'); raise SystemExit(7)" 2>/dev/null; echo "rc=$?"
