#!/bin/bash
# steps on decode_bench traced as whole graphs: each decode step's GPU work comes from its graph execution.
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
$K record --cuda-graph-trace graph -o /tmp/dbg.sqlite -- /tmp/db --iters 1 --warmup 1 --cuda-graph on 2>&1 | tail -3
$K steps /tmp/dbg.sqlite 2>&1 | sed -n '1,8p;/Note\|note\|asynchronous/p' | cut -c1-220
$K report /tmp/dbg.sqlite 2>&1 | grep -i -A3 "graph\|asynchronous" | head -20
