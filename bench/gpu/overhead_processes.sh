#!/bin/bash
# Tracer overhead across processes: each run is a fresh process of the workload, untraced or under
# a profiler, in interleaved rounds (every variant once per round). Simple, but the shared GPU host
# drifts between processes by more than a few percent (bench/RESULTS.md); overhead_ab.sh measures
# inside one process. The last round's traces are kept and, when both kernscope (variant all) and
# nsys traced a workload, compared with tracer_fidelity.sh. Run from the repository root on the GPU
# machine (see tracer_env.sh).
#
# usage: bench/gpu/overhead_processes.sh WORKLOAD[,WORKLOAD...] VARIANT...
#   WORKLOAD  llama         ../shared/tools/llama_decode_workload.py (copied to .gpu/tools; PROMPT and
#                           GEN passed through): the eager Llama at batch 1, prints its TPOT
#             graph-app     tests/fixtures/nsys/graph_tiny_kernels_h200/workload.cu with 2000
#                           iterations: replays of a 32-kernel graph, then as many eager launches
#             decode-graph  examples/decode_bench (--iters 3 --warmup 1) with CUDA graphs on
#             decode-eager  the same with CUDA graphs off
#             launch-eager  bench/gpu/launch_cost.cu eager 50000 7: launches of an empty kernel
#             launch-graph  launch_cost graph 128000 7: replays of a graph of 32 empty kernels
#             torch-loop    a PyTorch loop of 20,000 tiny in-place adds, 6 repetitions
#   VARIANT   none              no profiler
#             all               kernscope record with its defaults
#             KINDS             kernscope record --record KINDS (kernel, runtime, kernel,runtime,
#                               kernel,nvtx, runtime,nvtx, nvtx, ...)
#             attach            kernscope record --record overhead: CUPTI attached, nothing recorded
#                               on the launch path
#             graph-level       kernscope record --cuda-graph-trace graph
#             all-flush0        kernscope record with KERNSCOPE_FLUSH_MS=0
#             V-nvml0           variant V (all or KINDS) with --nvml-interval 0: no GPU samples
#             floor             bench/gpu/cupti_floor.cpp injected for the whole program: CUPTI kernel
#                               records only, counted and dropped (no callbacks, no NVTX, no writer)
#             floor-runtime     the same plus CUPTI's RUNTIME records (the whole kind)
#             paused            kernscope record --paused: the tracer attached, no window ever opened
#             paused-node       the same with --cuda-graph-trace node (no whole-graph records enabled)
#             paused-old        record --paused with the tracer library OLD_TRACER_LIB (the one before a
#                               change, to compare in the same rounds)
#             floor-attach      cupti_floor injected, nothing enabled (buffer callbacks registered, the
#                               profiler calls' callbacks subscribed): CUPTI attached and idle
#             floor-graph       floor-attach plus whole-graph records enabled for the run
#             floor-profrec     floor-attach plus the API records of the profiler calls alone
#             floor-paused      floor-attach plus both and the DEVICE kind: what a paused kernscope
#                               keeps enabled in CUPTI, without the rest of kernscope
#             nsys              nsys profile --trace=$NSYS_TRACE --cuda-graph-trace=node
#             nsys-graph-level  the same with --cuda-graph-trace=graph
#             torchprof         the PyTorch profiler inside the workload (llama only: TORCHPROF)
# Environment: ROUNDS (2); ROTATE=1 rotates the variants' order by one each round (a drift then
# falls on every variant alike); PIN, a command prefix such as "taskset -c 4-11" (none); NVML_INTERVAL,
# kernscope record's --nvml-interval (its default when unset); NSYS_TRACE (cuda,nvtx); TIMEOUT per
# run (100 s; 150 s under nsys; 120 s for launch_cost and the torch loop).
# Prints "round R WORKLOAD VARIANT: <the workload's figure line>" per run, then the kernel and
# launch records of each kept trace.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
if [ $# -lt 2 ]; then awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" >&2; exit 2; fi
WORKLOADS=${1//,/ }
shift
VARIANTS="$*"
PIN=${PIN:-}
OLD_TRACER_LIB=${OLD_TRACER_LIB:-$R/.gpu/bin/libkernscope_tracer_prev.so}
NSYS_TRACE=${NSYS_TRACE:-cuda,nvtx}
NVML=${NVML_INTERVAL:+--nvml-interval $NVML_INTERVAL}
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
case " $VARIANTS " in
  *" floor"*)
    # The floor links the CUPTI that kernscope's tracer loads, so both pay the same library's cost.
    CUPTI_LIB=$(LD_LIBRARY_PATH=$R/.gpu/lib ldd "$KERNSCOPE_TRACER_LIB" | awk '/libcupti/ {print $3}')
    g++ -std=c++17 -O2 -shared -fPIC $R/bench/gpu/cupti_floor.cpp -I/usr/local/cuda/include \
      -I/usr/local/cuda/extras/CUPTI/include "$CUPTI_LIB" -Wl,-rpath,"$(dirname "$CUPTI_LIB")" -o /tmp/libcupti_floor.so || exit 1
    echo "floor: $(ldd /tmp/libcupti_floor.so | grep cupti)" ;;
esac
for w in $WORKLOADS; do
  case $w in
    graph-app) nvcc -O2 -arch=sm_90 $R/tests/fixtures/nsys/graph_tiny_kernels_h200/workload.cu -o /tmp/graph_app || exit 1 ;;
    decode-*) nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1 ;;
    launch-*) nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1 ;;
    torch-loop) cat > /tmp/torch_loop.py <<'PY'
import time, torch
x = torch.zeros(1, device="cuda")
per, cpu = [], []
for r in range(6):
    torch.cuda.synchronize(); t0 = time.perf_counter(); c0 = time.process_time()
    for i in range(20000): x.add_(1)
    torch.cuda.synchronize(); t1 = time.perf_counter(); c1 = time.process_time()
    if r: per.append((t1 - t0) / 20000 * 1e9); cpu.append((c1 - c0) / 20000 * 1e9)
per.sort(); cpu.sort()
print(f"torch ns_per_kernel={per[len(per)//2]:.1f} min={per[0]:.1f} max={per[-1]:.1f} process_cpu_ns={cpu[len(cpu)//2]:.1f}")
PY
    ;;
  esac
done

# Sets CMD (the workload's command line), LIMIT (seconds per run) and FIGURE (the pattern of the
# line the workload prints its result on).
workload() {
  LIMIT=${TIMEOUT:-100}
  case $1 in
    llama) CMD="python3 $R/.gpu/tools/llama_decode_workload.py"; FIGURE=TPOT ;;
    graph-app) CMD="/tmp/graph_app 2000"; FIGURE=graph_us ;;
    decode-graph) CMD="/tmp/db --iters 3 --warmup 1 --cuda-graph on"; FIGURE=TPOT ;;
    decode-eager) CMD="/tmp/db --iters 3 --warmup 1 --cuda-graph off"; FIGURE=TPOT ;;
    launch-eager) CMD="/tmp/launch_cost eager 50000 7"; FIGURE=ns_per_kernel; LIMIT=${TIMEOUT:-120} ;;
    launch-graph) CMD="/tmp/launch_cost graph 128000 7"; FIGURE=ns_per_kernel; LIMIT=${TIMEOUT:-120} ;;
    torch-loop) CMD="python3 /tmp/torch_loop.py"; FIGURE=ns_per_kernel; LIMIT=${TIMEOUT:-120} ;;
    *) echo "unknown workload: $1" >&2; exit 2 ;;
  esac
}

# One run of workload $1 under variant $2; its trace is /tmp/proc_$1_$2.sqlite (.nsys-rep for nsys).
run() {
  local w=$1 v=$2 out=/tmp/proc_$1_${2//,/+}
  local NVML=$NVML
  case $v in *-nvml0) NVML="--nvml-interval 0"; v=${v%-nvml0} ;; esac
  local record="$K record $NVML -o $out.sqlite --"
  case $v in
    none) timeout $LIMIT $PIN $CMD 2>/dev/null ;;
    all) timeout $LIMIT $record $PIN $CMD 2>/dev/null ;;
    attach) timeout $LIMIT $K record $NVML --record overhead -o $out.sqlite -- $PIN $CMD 2>/dev/null ;;
    graph-level) timeout $LIMIT $K record $NVML --cuda-graph-trace graph -o $out.sqlite -- $PIN $CMD 2>/dev/null ;;
    all-flush0) KERNSCOPE_FLUSH_MS=0 timeout $LIMIT $record $PIN $CMD 2>/dev/null ;;
    nsys | nsys-graph-level)
      local graphs=node
      [ $v = nsys-graph-level ] && graphs=graph
      timeout ${TIMEOUT:-150} "$NSYS" profile --trace=$NSYS_TRACE --cuda-graph-trace=$graphs --force-overwrite=true \
        -o $out $PIN $CMD 2>/dev/null ;;
    torchprof) TORCHPROF=$out.json timeout $LIMIT $PIN $CMD 2>/dev/null ;;
    floor) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_WHOLE_PROGRAM=1 timeout $LIMIT $PIN $CMD 2>>/tmp/floor_stderr.txt ;;
    floor-runtime) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_WHOLE_PROGRAM=1 CUPTI_FLOOR_RUNTIME=1 \
      timeout $LIMIT $PIN $CMD 2>>/tmp/floor_stderr.txt ;;
    paused) timeout $LIMIT $K record $NVML --paused -o $out.sqlite -- $PIN $CMD 2>/dev/null ;;
    paused-node) timeout $LIMIT $K record $NVML --paused --cuda-graph-trace node -o $out.sqlite -- $PIN $CMD 2>/dev/null ;;
    paused-old) KERNSCOPE_TRACER_LIB=$OLD_TRACER_LIB timeout $LIMIT $K record $NVML --paused -o $out.sqlite -- $PIN $CMD 2>/dev/null ;;
    floor-attach) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so timeout $LIMIT $PIN $CMD 2>>/tmp/floor_stderr.txt ;;
    floor-graph) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_GRAPH_TRACE=1 timeout $LIMIT $PIN $CMD 2>>/tmp/floor_stderr.txt ;;
    floor-profrec) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_PROFILER_RECORDS=1 \
      timeout $LIMIT $PIN $CMD 2>>/tmp/floor_stderr.txt ;;
    floor-paused) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_GRAPH_TRACE=1 CUPTI_FLOOR_PROFILER_RECORDS=1 \
      CUPTI_FLOOR_DEVICE=1 timeout $LIMIT $PIN $CMD 2>>/tmp/floor_stderr.txt ;;
    *) timeout $LIMIT $K record $NVML --record $v -o $out.sqlite -- $PIN $CMD 2>/dev/null ;;
  esac | grep "$FIGURE" | tail -1
}

rm -f /tmp/proc_*.sqlite /tmp/proc_*.nsys-rep /tmp/floor_stderr.txt
for round in $(seq 1 ${ROUNDS:-2}); do
  ORDER=$VARIANTS
  if [ "${ROTATE:-0}" = 1 ]; then
    set -- $VARIANTS
    k=$(( (round - 1) % $# ))
    ORDER="${*:k+1} ${*:1:k}"
  fi
  for w in $WORKLOADS; do
    workload $w
    for v in $ORDER; do
      if [ $v = torchprof ] && [ $w != llama ]; then echo "round $round $w $v: skipped (llama only)"; continue; fi
      local_start=$(date +%s.%N)
      line=$(run $w $v)
      echo "round $round $w $v: $line (wall $(python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.1f}')" $local_start $(date +%s.%N)) s)"
    done
  done
done
for rep in /tmp/proc_*.nsys-rep; do
  [ -f "$rep" ] && timeout 150 "$NSYS" export --type sqlite --force-overwrite=true -o "${rep%.nsys-rep}.sqlite" "$rep" >/dev/null 2>&1
done
[ -f /tmp/floor_stderr.txt ] && grep cupti_floor /tmp/floor_stderr.txt
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
for f in /tmp/proc_*.sqlite; do
  [ -f "$f" ] && echo "$f: kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q $f "$LAUNCH")"
done
for w in $WORKLOADS; do
  if [ -f /tmp/proc_${w}_all.sqlite ] && [ -f /tmp/proc_${w}_nsys.sqlite ]; then
    echo "== fidelity, $w: kernscope record vs nsys, last round"
    (cd $R && bash bench/gpu/tracer_fidelity.sh /tmp/proc_${w}_all.sqlite /tmp/proc_${w}_nsys.sqlite)
  fi
done
