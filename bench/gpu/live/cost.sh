#!/bin/bash
# What live capture costs on the eager Llama bs1 decode (issue 30, item 4), two ways:
#  1. inside one process: --every-steps 40 --steps 20 alternates windows and paused stretches many
#     times; each step's time (the program's clock) inside a window vs outside one (cost.py inside);
#  2. whole programs, interleaved rounds, pinned cores: no tracer, record --paused, record --paused
#     --step-range auto (NVTX step watching), record's defaults: TPOT and CPU ms per step.
# usage: bench/gpu/live/cost.sh [ROUNDS] [GEN]      (from the repository root on the GPU machine)
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; OUT=${OUT:-/tmp/live}; mkdir -p $OUT
ROUNDS=${1:-4}; export GEN=${2:-128}
PIN="taskset -c 2-9"
P="python3 $R/bench/gpu/live/llama_live.py"
echo "== 1. alternating windows inside one process (GEN=600)"
GEN=600 $PIN $KS record --every-steps 40 --steps 20 -o $OUT/alternate.sqlite -- $P > $OUT/alternate.json 2> $OUT/alternate.err
tail -2 $OUT/alternate.err
python3 $R/bench/gpu/live/cost.py inside $OUT/alternate.sqlite $OUT/alternate.json
echo "== 2. whole programs, $ROUNDS interleaved rounds, GEN=$GEN"
for r in $(seq 1 $ROUNDS); do
  $PIN $P > $OUT/none-$r.json 2>/dev/null
  $PIN $KS record --paused -o $OUT/p.sqlite -- $P > $OUT/paused-$r.json 2>/dev/null
  $PIN $KS record --paused --step-range auto -o $OUT/p.sqlite -- $P > $OUT/pausedsteps-$r.json 2>/dev/null
  $PIN $KS record -o $OUT/d-$r.sqlite -- $P > $OUT/defaults-$r.json 2>/dev/null
  rm -f $OUT/d-$r.sqlite*
done
python3 $R/bench/gpu/live/cost.py rounds $OUT $ROUNDS none paused pausedsteps defaults
