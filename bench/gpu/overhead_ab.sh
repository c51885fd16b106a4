#!/bin/bash
# Tracer cost per kernel measured in one process (launch_cost *-ab: untraced and traced repetitions
# alternate, the tracer recording only between cudaProfilerStart/Stop), by what is recorded; then
# whole-graph tracing (--cuda-graph-trace graph) checked against nsys's on the same programs.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat -o /tmp/ab.sqlite"
for round in 1 2; do
  for w in "eager-ab 40000 9" "graph-ab 96000 9"; do
    echo "== round $round $w"
    echo "no-tracer: $(timeout 60 /tmp/launch_cost $w | tr '\n' ' ')"
    for rec in kernel runtime kernel,runtime nvtx all; do
      sel=$([ $rec = all ] && echo "" || echo "--record $rec")
      echo "$rec: $(timeout 60 $K record $AB $sel -- /tmp/launch_cost $w 2>/dev/null | tr '\n' ' ')"
    done
    echo "all,graph-level: $(timeout 60 $K record $AB --cuda-graph-trace graph -- /tmp/launch_cost $w 2>/dev/null | tr '\n' ' ')"
  done
done
echo "== whole-graph tracing: kernscope vs nsys on launch_cost graph 3200 1 (2 x 100 replays of 32 kernels)"
$K record --cuda-graph-trace graph -o /tmp/kg.sqlite -- /tmp/launch_cost graph 3200 1
"$NSYS" profile --trace=cuda --cuda-graph-trace=graph --force-overwrite=true -o /tmp/ng /tmp/launch_cost graph 3200 1 >/dev/null 2>&1
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/ng.sqlite /tmp/ng.nsys-rep >/dev/null 2>&1
for f in /tmp/kg.sqlite /tmp/ng.sqlite; do
  echo "$f: $(q $f 'select count(*), sum(end-start), min(graphId), max(graphId), min(graphExecId), max(graphExecId) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE' )" \
       "kernels: $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL' 2>&1)"
done
q /tmp/ng.sqlite "select e.graphId, e.originalGraphId, e.graphExecId, s.value from CUDA_GRAPH_EVENTS e join StringIds s on s.id = e.nameId" 2>&1 | head
$K info /tmp/kg.sqlite | sed -n '/Events/,/Processes/p'
echo "== decode_bench with CUDA graphs: node vs graph tracing (kernscope) and nsys graph-level"
nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
A="--iters 3 --warmup 1 --cuda-graph on"
echo "none: $(timeout 100 /tmp/db $A | tail -1)"
echo "node: $(timeout 100 $K record --cuda-graph-trace node -o /tmp/dbn.sqlite -- /tmp/db $A 2>/dev/null | tail -1)"
echo "graph: $(timeout 100 $K record --cuda-graph-trace graph -o /tmp/dbg.sqlite -- /tmp/db $A 2>/dev/null | tail -1)"
timeout 150 "$NSYS" profile --trace=cuda,nvtx --cuda-graph-trace=graph --force-overwrite=true -o /tmp/dbng /tmp/db $A 2>/dev/null | grep TPOT
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/dbng.sqlite /tmp/dbng.nsys-rep >/dev/null 2>&1
for f in /tmp/dbg.sqlite /tmp/dbng.sqlite; do
  echo "$f: graph execs $(q $f 'select count(*), avg(end-start) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE') kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL')"
done
$K steps /tmp/dbg.sqlite 2>&1 | head -20
$K steps /tmp/dbng.sqlite 2>&1 | head -12
cp /tmp/kg.sqlite /tmp/ng.sqlite $OUT/ 2>/dev/null
