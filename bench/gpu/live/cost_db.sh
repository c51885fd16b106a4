#!/bin/bash
# What live capture costs on a launch-bound decode that holds its step time (issue 30, item 4):
# examples/decode_bench without CUDA graphs (Llama-1B shapes, batch 1, every kernel launched eagerly),
# whole programs in interleaved rounds on pinned cores: no tracer, record --paused, record --paused
# --step-range auto (the NVTX step watch), record's defaults. Prints each round's TPOT and, per
# configuration, the same-round ratio to no tracer (median and range).
# usage: bench/gpu/live/cost_db.sh [ROUNDS]          (from the repository root on the GPU machine)
#   CONFIGS="none paused steps defaults" (default) or any of them plus "sampled" (record --every 2 --for 0.2:
#   a window of 0.2 s every 2 s, its cost averaged over the run); ITERS (measured passes, default 5).
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; ROUNDS=${1:-10}
[ -x /tmp/db ] || nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
DB="taskset -c 2-5 /tmp/db --layers 16 --hidden 2048 --ffn 5632 --output-len 128 --iters ${ITERS:-5} --cuda-graph off"
CONFIGS=${CONFIGS:-none paused steps defaults}
tpot() { grep -o 'TPOT_ms=[0-9.]*' | cut -d= -f2; }
declare -A T
for r in $(seq 1 $ROUNDS); do
  line="round $r:"
  for c in $CONFIGS; do
    case $c in
      none) T[$c,$r]=$($DB 2>/dev/null | tpot) ;;
      paused) T[$c,$r]=$($KS record --paused -o /tmp/p.sqlite -- $DB 2>/dev/null | tpot) ;;
      steps) T[$c,$r]=$($KS record --paused --step-range auto -o /tmp/p.sqlite -- $DB 2>/dev/null | tpot) ;;
      sampled) T[$c,$r]=$($KS record --every 2 --for 0.2 -o /tmp/s.sqlite -- $DB 2>/dev/null | tpot); rm -f /tmp/s.sqlite* ;;
      defaults) T[$c,$r]=$($KS record -o /tmp/d.sqlite -- $DB 2>/dev/null | tpot); rm -f /tmp/d.sqlite* ;;
    esac
    line="$line $c ${T[$c,$r]}"
  done
  echo "$line (TPOT ms)"
done
for c in $CONFIGS; do
  [ $c = none ] && continue
  for r in $(seq 1 $ROUNDS); do echo "${T[$c,$r]} ${T[none,$r]}"; done |
    python3 -c "import sys,statistics as s; x=[float(a)/float(b)-1 for a,b in (l.split() for l in sys.stdin) if a and b]; print('$c vs none: median %+.2f %% (%+.2f .. %+.2f, %d rounds)' % (s.median(x)*100, min(x)*100, max(x)*100, len(x)))"
done
