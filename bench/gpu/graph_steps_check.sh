#!/bin/bash
# steps on decode_bench with CUDA graphs, traced as whole graphs and node by node: each decode step's
# GPU work comes from its graph execution (or its nodes), and the GPU period per step is compared
# with the TPOT the program measures itself with CUDA events.
#
# usage: bench/gpu/graph_steps_check.sh [MODE...]   (--cuda-graph-trace modes; default: graph node)
source "$(dirname "$0")/tracer_env.sh"
cd /tmp || exit 1
nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
[ $# -gt 0 ] || set -- graph node
for mode in "$@"; do
  echo "== --cuda-graph-trace $mode"
  $K record --cuda-graph-trace $mode -o /tmp/db_$mode.sqlite -- /tmp/db --iters 1 --warmup 1 --cuda-graph on 2>&1 | grep -i "tpot\|wrote"
  $K steps /tmp/db_$mode.sqlite 2>&1 | sed -n '/Steps from/,$p' | cut -c1-260
done
$K report /tmp/db_graph.sqlite 2>&1 | grep -i "period\|TPOT\|asynchronous" | head -6 | cut -c1-260
