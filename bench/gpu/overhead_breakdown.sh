#!/bin/bash
# Where the tracer's cost goes on launch-bound work: the eager Llama at batch 1, by recorded kinds.
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
W=$R/.gpu/tools/llama_decode_workload.py
for i in 1 2; do
  echo "none $(timeout 100 python3 $W 2>/dev/null | tail -1)"
  echo "all $(timeout 100 $K record --nvml-interval 0 -o /tmp/a.sqlite -- python3 $W 2>/dev/null | tail -1)"
  echo "kernel,nvtx $(timeout 100 $K record --nvml-interval 0 --record kernel,nvtx -o /tmp/b.sqlite -- python3 $W 2>/dev/null | tail -1)"
  echo "runtime,nvtx $(timeout 100 $K record --nvml-interval 0 --record runtime,nvtx -o /tmp/c.sqlite -- python3 $W 2>/dev/null | tail -1)"
  echo "nvtx $(timeout 100 $K record --nvml-interval 0 --record nvtx -o /tmp/d.sqlite -- python3 $W 2>/dev/null | tail -1)"
done
