#!/bin/bash
# Whole-graph tracing (--cuda-graph-trace graph) by kernscope's tracer against nsys's on the same
# programs: bench/gpu/launch_cost.cu graph N REPS (REPS x N/32 replays of a graph of 32 empty
# kernels; the fixtures of tests/fixtures/graph_trace were made with the defaults, 3200 1) and
# examples/decode_bench with CUDA graphs on. Prints, for each tool's file, the graph-execution
# records (count, total GPU time, ids) and the kernel records, nsys's table of graph ids and
# kernscope's reading of both; copies the two launch_cost traces to $OUT.
#
# usage: bench/gpu/graph_trace_check.sh [N REPS]
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
N=${1:-3200}
REPS=${2:-1}
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
echo "== launch_cost graph $N $REPS: kernscope vs nsys, whole graphs"
$K record --cuda-graph-trace graph -o /tmp/kg.sqlite -- /tmp/launch_cost graph $N $REPS
"$NSYS" profile --trace=cuda --cuda-graph-trace=graph --force-overwrite=true -o /tmp/ng /tmp/launch_cost graph $N $REPS >/dev/null 2>&1
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/ng.sqlite /tmp/ng.nsys-rep >/dev/null 2>&1
for f in /tmp/kg.sqlite /tmp/ng.sqlite; do
  echo "$f: $(q $f 'select count(*), sum(end-start), min(graphId), max(graphId), min(graphExecId), max(graphExecId) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE')" \
       "kernels: $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL')"
done
q /tmp/ng.sqlite "select e.graphId, e.originalGraphId, e.graphExecId, s.value from CUDA_GRAPH_EVENTS e join StringIds s on s.id = e.nameId" | head
echo "== nsys's tables for graph, kernel and runtime records"
python3 - <<'PY'
import sqlite3
c = sqlite3.connect("/tmp/ng.sqlite")
for (name, sql) in c.execute("select name, sql from sqlite_master where type='table'"):
    n = c.execute(f"select count(*) from [{name}]").fetchone()[0]
    if "GRAPH" in name or "KERNEL" in name or "RUNTIME" in name:
        print(sql); print("rows", n)
        for row in c.execute(f"select * from [{name}] limit 3"): print("  ", row)
PY
$K info /tmp/kg.sqlite | sed -n '/Events/,/Processes/p'
$K stats -r cuda_gpu_kern_sum,cuda_api_sum /tmp/ng.sqlite 2>&1 | head -30
echo "== decode_bench with CUDA graphs: kernscope (whole graphs) vs nsys (whole graphs)"
nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
A="--iters 3 --warmup 1 --cuda-graph on"
timeout 100 $K record --cuda-graph-trace graph -o /tmp/dbg.sqlite -- /tmp/db $A 2>/dev/null | grep TPOT
timeout 150 "$NSYS" profile --trace=cuda,nvtx --cuda-graph-trace=graph --force-overwrite=true -o /tmp/dbng /tmp/db $A 2>/dev/null | grep TPOT
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/dbng.sqlite /tmp/dbng.nsys-rep >/dev/null 2>&1
for f in /tmp/dbg.sqlite /tmp/dbng.sqlite; do
  echo "$f: graph execs $(q $f 'select count(*), avg(end-start) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE') kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL')"
done
$K steps /tmp/dbg.sqlite 2>&1 | head -20
$K steps /tmp/dbng.sqlite 2>&1 | head -12
cp /tmp/kg.sqlite /tmp/ng.sqlite "$OUT"/ 2>/dev/null
