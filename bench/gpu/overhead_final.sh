#!/bin/bash
# Final overhead figures: API records inside capture ranges, the eager Llama A/B (3 rounds) by what is
# recorded, launch_cost A/B, decode_bench with graphs traced node by node and as whole graphs.
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat"
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
echo "== API records inside capture ranges (3 traced reps x 8000 launches expected)"
$K record $AB -o /tmp/e1.sqlite -- /tmp/launch_cost eager-ab 8000 3 2>&1 | grep -v "^eager"
echo "default: kernels $(q /tmp/e1.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/e1.sqlite "$LAUNCH")"
$K record $AB --api all -o /tmp/e2.sqlite -- /tmp/launch_cost eager-ab 8000 3 >/dev/null 2>&1
echo "--api all: kernels $(q /tmp/e2.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/e2.sqlite "$LAUNCH")"
echo "== launch_cost eager-ab"
for rec in all kernel; do
  sel=$([ $rec = all ] && echo "" || echo "--record $rec")
  echo "$rec: $(timeout 60 $K record $AB $sel -o /tmp/ab.sqlite -- /tmp/launch_cost eager-ab 40000 15 2>/dev/null | tr '\n' ' ')"
done
L=$R/bench/gpu/llama_ab.py
PIN="taskset -c 4-11"
export BLOCKS=12 STEPS=24
echo "== llama A/B in one process ($BLOCKS untraced + $BLOCKS traced blocks of $STEPS decode steps)"
for round in 1 2 3; do
  echo "no-tracer: $(timeout 150 $PIN python3 $L 2>/dev/null | tail -1)"
  echo "all: $(timeout 150 $K record $AB -o /tmp/la.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
  echo "kernel: $(timeout 150 $K record $AB --record kernel -o /tmp/lc.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
done
echo "all: kernels $(q /tmp/la.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/la.sqlite "$LAUNCH") nvtx $(q /tmp/la.sqlite 'select count(*) from NVTX_EVENTS')"
echo "== decode_bench, CUDA graphs: none / node / whole graphs, interleaved"
nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
A="--iters 3 --warmup 1 --cuda-graph on"
for round in 1 2; do
  echo "none: $(timeout 100 /tmp/db $A | tail -1 | cut -d' ' -f1-2)"
  echo "node: $(timeout 100 $K record -o /tmp/dbn.sqlite -- /tmp/db $A 2>/dev/null | tail -1 | cut -d' ' -f1-2)"
  echo "graph: $(timeout 100 $K record --cuda-graph-trace graph -o /tmp/dbg.sqlite -- /tmp/db $A 2>/dev/null | tail -1 | cut -d' ' -f1-2)"
done
