#!/bin/bash
# After API records are enabled per call (not per domain) and whole graphs are traced once per run:
# the crash check, cost per kernel (launch_cost A/B), the eager Llama A/B and across processes.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat"
echo "== graph-ab, whole graphs, capture ranges (3 traced reps of 3000 replays expected)"
timeout 60 $K record $AB --cuda-graph-trace graph -o /tmp/gab.sqlite -- /tmp/launch_cost graph-ab 96000 3; echo "rc=$?"
echo "graph execs: $(q /tmp/gab.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE') launches: $(q /tmp/gab.sqlite "select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like 'cudaGraphLaunch%'")"
for round in 1 2; do
  for w in "eager-ab 40000 9" "graph-ab 96000 9"; do
    echo "== round $round $w"
    echo "all: $(timeout 60 $K record $AB -o /tmp/ab.sqlite -- /tmp/launch_cost $w 2>/dev/null | tr '\n' ' ')"
    echo "kernel: $(timeout 60 $K record $AB --record kernel -o /tmp/ab.sqlite -- /tmp/launch_cost $w 2>/dev/null | tr '\n' ' ')"
    echo "all,graph-level: $(timeout 60 $K record $AB --cuda-graph-trace graph -o /tmp/ab.sqlite -- /tmp/launch_cost $w 2>/dev/null | tr '\n' ' ')"
  done
done
L=$R/bench/gpu/llama_ab.py
PIN="taskset -c 4-11"
export BLOCKS=12 STEPS=24
echo "== llama A/B in one process ($BLOCKS untraced + $BLOCKS traced blocks of $STEPS decode steps)"
for round in 1 2; do
  echo "no-tracer: $(timeout 150 $PIN python3 $L 2>/dev/null | tail -1)"
  echo "all: $(timeout 150 $K record $AB -o /tmp/la.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
  echo "kernel: $(timeout 150 $K record $AB --record kernel -o /tmp/lc.sqlite -- $PIN python3 $L 2>/dev/null | tail -1)"
done
$K info /tmp/la.sqlite | sed -n '/Events/,/Processes/p'
$K stats -r cuda_api_sum /tmp/la.sqlite | head -12
echo "== llama workload across processes, pinned, interleaved"
W=$R/.gpu/tools/llama_decode_workload.py
for round in 1 2; do
  echo "none $(timeout 100 $PIN python3 $W 2>/dev/null | tail -1)"
  echo "kernscope $(timeout 100 $K record -o /tmp/l.sqlite -- $PIN python3 $W 2>/dev/null | tail -1)"
  echo "nsys $(timeout 150 "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o /tmp/l_nsys $PIN python3 $W 2>/dev/null | grep TPOT)"
done
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/l_nsys.sqlite /tmp/l_nsys.nsys-rep >/dev/null 2>&1
for f in /tmp/l.sqlite /tmp/l_nsys.sqlite; do
  echo "$f: kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q $f "select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'")"
done
