#!/bin/bash
# The eager Llama A/B (bench/gpu/llama_ab.py: alternating pairs of traced and untraced blocks in one
# process, pairwise medians with bootstrap intervals) under each tracer, in interleaved rounds:
#   control    no tracer (both kinds of block alike: the A/B's own noise)
#   all        kernscope record, everything it records by default
#   all-kind   the same with the previous tracer library (API records toggled by kind inside ranges)
#   kernel     kernscope record --record kernel
#   floor      bench/gpu/cupti_floor.cpp: CUPTI kernel records counted and dropped (CUPTI's own cost)
#   nsys       nsys profile --trace=cuda,nvtx with the same capture range
#   torch      torch.profiler (CPU + CUDA) around the traced blocks
# Environment: ROUNDS (1), WHICH (the list above), PAIRS/STEPS for llama_ab.py.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OLD=$R/.gpu/bin/libkernscope_tracer_kindapi.so
FLOOR=$R/.gpu/bin/libcupti_floor.so
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat"
PIN="taskset -c 4-11"
L=$R/bench/gpu/llama_ab.py
WHICH=${WHICH:-"control all all-kind kernel floor nsys torch"}
for round in $(seq 1 ${ROUNDS:-1}); do
  for w in $WHICH; do
    case $w in
      control) out=$(timeout 200 $PIN python3 $L 2>/dev/null | tail -1) ;;
      all) out=$(timeout 200 $K record $AB -o /tmp/la.sqlite -- $PIN python3 $L 2>/dev/null | tail -1) ;;
      all-kind) out=$(KERNSCOPE_TRACER_LIB=$OLD timeout 200 $K record $AB -o /tmp/lo.sqlite -- $PIN python3 $L 2>/dev/null | tail -1) ;;
      kernel) out=$(timeout 200 $K record $AB --record kernel -o /tmp/lk.sqlite -- $PIN python3 $L 2>/dev/null | tail -1) ;;
      floor) out=$(CUDA_INJECTION64_PATH=$FLOOR timeout 200 $PIN python3 $L 2>/tmp/floor.err | tail -1); out="$out [$(grep cupti_floor /tmp/floor.err)]" ;;
      nsys) out=$(timeout 200 "$NSYS" profile --trace=cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=repeat --force-overwrite=true -o /tmp/nab $PIN python3 $L 2>/dev/null | grep TPOT | tail -1) ;;
      torch) out=$(PEER=torch timeout 200 $PIN python3 $L 2>/dev/null | tail -1) ;;
    esac
    echo "round $round $w: $out"
  done
done
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
for f in /tmp/la.sqlite /tmp/lo.sqlite /tmp/lk.sqlite; do
  [ -f $f ] && echo "$f: kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q $f "$LAUNCH") api $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME')"
done
