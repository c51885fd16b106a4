#!/bin/bash
# What CUPTI costs attached but paused, measured inside one process (issue 30, item 4): blocks with
# CUPTI detached (cuptiFinalize) and attached in kernscope's paused state (the profiler calls' API
# records and the DEVICE kind enabled; bench/gpu/cupti_floor.cpp) alternate, so
# the host's drift between processes (+-20 % on these hosts) falls out of the pairwise figures.
#   launch  bench/gpu/launch_cost.cu attach-ab: $LAUNCHES launches of an empty kernel per block,
#           $REPS pairs, $PROCS processes of each of $LAUNCH_STATES
#   llama   bench/gpu/llama_ab.py ATTACH_AB=1: the eager Llama, $PAIRS pairs of $STEPS decode steps,
#           one process of each of $LLAMA_STATES (a state named twice runs twice)
# States (what is enabled while attached): paused_state (profrec and device: what `record --paused`
# keeps enabled), paused_graph (those and graph: `record --paused --cuda-graph-trace graph`, whose
# whole-graph records cannot be enabled later), attach_only (nothing), graph (whole-graph records),
# profrec (the profiler calls' API records), device (the DEVICE kind).
# Run from the repository root on the GPU machine (see ../tracer_env.sh); PHASES="launch llama".
source "$(dirname "$0")/../tracer_env.sh"
PIN=${PIN:-taskset -c 2-9}; PHASES=${PHASES:-launch llama}
LAUNCHES=${LAUNCHES:-50000}; REPS=${REPS:-15}; PROCS=${PROCS:-4}
PAIRS=${PAIRS:-20}; STEPS=${STEPS:-12}; LLAMA_PROCS=${LLAMA_PROCS:-2}
CUPTI_LIB=$(LD_LIBRARY_PATH=$R/.gpu/lib ldd "$KERNSCOPE_TRACER_LIB" | awk '/libcupti/ {print $3}')
g++ -std=c++17 -O2 -shared -fPIC $R/bench/gpu/cupti_floor.cpp -I/usr/local/cuda/include \
  -I/usr/local/cuda/extras/CUPTI/include "$CUPTI_LIB" -Wl,-rpath,"$(dirname "$CUPTI_LIB")" -o /tmp/libcupti_floor.so || exit 1
echo "floor: $(ldd /tmp/libcupti_floor.so | grep cupti)"
attach_only="env CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_AB=1"
paused_state="$attach_only CUPTI_FLOOR_PROFILER_RECORDS=1 CUPTI_FLOOR_DEVICE=1"
paused_graph="$paused_state CUPTI_FLOOR_GRAPH_TRACE=1"
graph="$attach_only CUPTI_FLOOR_GRAPH_TRACE=1"
profrec="$attach_only CUPTI_FLOOR_PROFILER_RECORDS=1"
device="$attach_only CUPTI_FLOOR_DEVICE=1"
LAUNCH_STATES=${LAUNCH_STATES:-paused_state attach_only}
LLAMA_STATES=${LLAMA_STATES:-paused_state paused_state attach_only}
if [[ " $PHASES " == *" launch "* ]]; then
  nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
  for p in $(seq 1 $PROCS); do
    for state in $LAUNCH_STATES; do
      echo "== launch $state process $p $(date -u +%T)"
      timeout 120 ${!state} $PIN /tmp/launch_cost attach-ab $LAUNCHES $REPS 2>&1 | grep -v "^cupti_floor"
    done
  done
fi
if [[ " $PHASES " == *" llama "* ]]; then
  p=0
  for state in $LLAMA_STATES; do
    p=$((p + 1))
    echo "== llama $state process $p $(date -u +%T)"
    ATTACH_AB=1 PAIRS=$PAIRS STEPS=$STEPS timeout 300 ${!state} $PIN python3 $R/bench/gpu/llama_ab.py 2>&1 | grep -E "TPOT|Error|error|failed" | tail -3
  done
fi
