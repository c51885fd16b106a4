#!/bin/bash
# Tracer overhead measured inside one process. The workload alternates untraced and traced
# repetitions and the tracer records only the traced ones (between cudaProfilerStart/Stop, with
# --capture-range=cudaProfilerApi --capture-range-end=repeat), so a drift of the shared host falls
# on both kinds alike. Run from the repository root on the GPU machine (see tracer_env.sh).
#
# usage: bench/gpu/overhead_ab.sh WORKLOAD[,WORKLOAD...] VARIANT...
#   WORKLOAD  eager   bench/gpu/launch_cost.cu eager-ab LAUNCHES REPS: launches of an empty kernel
#                     (LAUNCHES 40000); prints the untraced, traced and per-pair cost per kernel
#             graph   launch_cost graph-ab LAUNCHES REPS: replays of a graph of 32 empty kernels
#                     (LAUNCHES 96000)
#             llama   bench/gpu/llama_ab.py, the eager Llama decode (PAIRS, STEPS, PROMPT, NVTX,
#                     BLOCKS are passed through), pinned with PIN; prints its TPOT summary line
#   VARIANT   none         no tracer: both kinds of repetition alike, the A/B's own noise ("control")
#             all          kernscope record with its defaults
#             KINDS        kernscope record --record KINDS (kernel, runtime, kernel,runtime, nvtx, ...)
#             graph-level  kernscope record --cuda-graph-trace graph
#             no-thread-cpu  kernscope record --thread-cpu-interval 0 (the launching threads' CPU clocks not read)
#             all-kind     kernscope record with the tracer library OLD_TRACER_LIB (default
#                          .gpu/bin/libkernscope_tracer_kindapi.so: the tracer before API records were
#                          switched call by call)
#             floor        bench/gpu/cupti_floor.cpp (.gpu/bin/libcupti_floor.so) injected instead:
#                          CUPTI's kernel records counted and dropped, what any CUPTI tracer pays
#             nsys         nsys profile --trace=cuda,nvtx with the same capture range
#             torch        torch.profiler (CPU + CUDA) around the traced blocks (llama only)
# Environment: ROUNDS (1) interleaved rounds of every workload and variant; REPS (9) and LAUNCHES
# for launch_cost; PIN ("taskset -c 4-11", llama only); TIMEOUT per run (60 s, llama 200 s).
# Prints "round R WORKLOAD VARIANT: <the workload's figures>" per run, then the record counts of
# the last traced file of each kernscope variant (kernels = launches inside the capture ranges).
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
if [ $# -lt 2 ]; then awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" >&2; exit 2; fi
WORKLOADS=${1//,/ }
shift
VARIANTS="$*"
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat"
PIN=${PIN-"taskset -c 4-11"}
OLD_TRACER_LIB=${OLD_TRACER_LIB:-$R/.gpu/bin/libkernscope_tracer_kindapi.so}
FLOOR=$R/.gpu/bin/libcupti_floor.so
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
case " $WORKLOADS " in
  *" eager "* | *" graph "*) nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1 ;;
esac

# Sets CMD (the workload's command line), LIMIT (seconds per run) and FIGURES (the filter that
# keeps the workload's result lines on one line).
workload() {
  case $1 in
    eager) CMD="/tmp/launch_cost eager-ab ${LAUNCHES:-40000} ${REPS:-9}"; LIMIT=${TIMEOUT:-60}; FIGURES="grep ns_per_kernel" ;;
    graph) CMD="/tmp/launch_cost graph-ab ${LAUNCHES:-96000} ${REPS:-9}"; LIMIT=${TIMEOUT:-60}; FIGURES="grep ns_per_kernel" ;;
    llama) CMD="$PIN python3 $R/bench/gpu/llama_ab.py"; LIMIT=${TIMEOUT:-200}; FIGURES="grep TPOT" ;;
    *) echo "unknown workload: $1" >&2; exit 2 ;;
  esac
}

# One run of workload $1 under variant $2; its traced file is /tmp/ab_$1_$2.sqlite.
run() {
  local w=$1 v=$2 out=/tmp/ab_$1_${2//,/+}.sqlite
  case $v in
    none | control) timeout $LIMIT $CMD 2>/dev/null ;;
    all) timeout $LIMIT $K record $AB -o $out -- $CMD 2>/dev/null ;;
    graph-level) timeout $LIMIT $K record $AB --cuda-graph-trace graph -o $out -- $CMD 2>/dev/null ;;
    no-thread-cpu) timeout $LIMIT $K record $AB --thread-cpu-interval 0 -o $out -- $CMD 2>/dev/null ;;
    all-kind) KERNSCOPE_TRACER_LIB=$OLD_TRACER_LIB timeout $LIMIT $K record $AB -o $out -- $CMD 2>/dev/null ;;
    floor) CUDA_INJECTION64_PATH=$FLOOR timeout $LIMIT $CMD 2>/tmp/floor.err ;;
    nsys) timeout $LIMIT "$NSYS" profile --trace=cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=repeat \
            --force-overwrite=true -o /tmp/ab_${w}_nsys $CMD 2>/dev/null ;;
    torch) PEER=torch timeout $LIMIT $CMD 2>/dev/null ;;
    *) timeout $LIMIT $K record $AB --record $v -o $out -- $CMD 2>/dev/null ;;
  esac | $FIGURES | tr '\n' ' '
  [ $v = floor ] && echo "[$(grep cupti_floor /tmp/floor.err)]"
}

rm -f /tmp/ab_*.sqlite
for round in $(seq 1 ${ROUNDS:-1}); do
  for w in $WORKLOADS; do
    workload $w
    for v in $VARIANTS; do
      if [ $v = torch ] && [ $w != llama ]; then echo "round $round $w $v: skipped (llama only)"; continue; fi
      echo "round $round $w $v: $(run $w $v)"
    done
  done
done
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
for f in /tmp/ab_*.sqlite; do
  [ -f "$f" ] || continue
  echo "$f: kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q $f "$LAUNCH")" \
    "api $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME')"
  case $f in *graph-level*) echo "  graph execs $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE')" ;; esac
done
