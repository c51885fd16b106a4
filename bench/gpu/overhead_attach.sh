#!/bin/bash
# The eager Llama across processes, pinned, interleaved rounds: no tracer / kernscope record (all
# kinds) / only kernel records / CUPTI attached with nothing on the launch path (--record overhead);
# and API records inside capture ranges (kind toggled per range).
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
AB="--nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat"
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
$K record $AB -o /tmp/e1.sqlite -- /tmp/launch_cost eager-ab 8000 3 >/dev/null 2>&1
echo "capture ranges: kernels $(q /tmp/e1.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/e1.sqlite "$LAUNCH") (24000 expected)"
PIN="taskset -c 4-11"
W=$R/.gpu/tools/llama_decode_workload.py
for round in 1 2 3 4; do
  echo "none $(timeout 100 $PIN python3 $W 2>/dev/null | tail -1)"
  echo "all $(timeout 100 $K record -o /tmp/l.sqlite -- $PIN python3 $W 2>/dev/null | tail -1)"
  echo "kernel $(timeout 100 $K record --record kernel -o /tmp/k.sqlite -- $PIN python3 $W 2>/dev/null | tail -1)"
  echo "attach $(timeout 100 $K record --record overhead -o /tmp/o.sqlite -- $PIN python3 $W 2>/dev/null | tail -1)"
done
echo "all: kernels $(q /tmp/l.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/l.sqlite "$LAUNCH")"
export BLOCKS=12 STEPS=24
echo "llama A/B, capture ranges, all: $(timeout 150 $K record $AB -o /tmp/la.sqlite -- $PIN python3 $R/bench/gpu/llama_ab.py 2>/dev/null | tail -1)"
echo "  launches $(q /tmp/la.sqlite "$LAUNCH") kernels $(q /tmp/la.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL')"
