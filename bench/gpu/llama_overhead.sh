#!/bin/bash
# The eager Llama at batch 1 (launch-bound): tracer overhead measured in one process (llama_ab.py,
# traced and untraced blocks alternating) by what is recorded, then across processes pinned to the
# same cores, interleaved: no profiler / kernscope record / nsys.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
echo "== graph-ab with whole-graph tracing (debug)"
timeout 60 $K record --nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat --cuda-graph-trace graph -o /tmp/gab.sqlite -- /tmp/launch_cost graph-ab 96000 3; echo "rc=$?"
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat"
L=$R/bench/gpu/llama_ab.py
PIN="taskset -c 4-11"
echo "== llama A/B in one process (8 untraced + 8 traced blocks of 32 decode steps)"
for round in 1 2; do
  echo "no-tracer: $(timeout 150 $PIN python3 $L 2>/dev/null | tail -1)"
  echo "all: $(timeout 150 $K record $AB -o /tmp/la.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
  echo "kernel,runtime: $(timeout 150 $K record $AB --record kernel,runtime -o /tmp/lb.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
  echo "kernel: $(timeout 150 $K record $AB --record kernel -o /tmp/lc.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
done
$K info /tmp/la.sqlite | sed -n '/Events/,/Processes/p'
echo "== llama workload across processes, pinned ($PIN), interleaved"
W=$R/.gpu/tools/llama_decode_workload.py
for round in 1 2; do
  echo "none $(timeout 100 $PIN python3 $W 2>/dev/null | tail -1)"
  echo "kernscope $(timeout 100 $K record --nvml-interval 10 -o /tmp/l.sqlite -- $PIN python3 $W 2>/dev/null | tail -1)"
  echo "nsys $(timeout 150 "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o /tmp/l_nsys $PIN python3 $W 2>/dev/null | grep TPOT)"
done
$K stats -r cuda_gpu_kern_sum /tmp/l.sqlite | head -3
$K info /tmp/l.sqlite | sed -n '/Events/,/Processes/p'
