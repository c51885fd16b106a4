#!/bin/bash
# What a window costs by the way it records API calls (issue 30 item 4: "inside a window no more than
# record's defaults"), on the eager Llama bs1 decode (llama_cost.py), inside one process: `record --every
# $EVERY --for $FOR`, each measured step inside a window against the paused steps of the same run
# (cost_llama_figures.py inside; steps at a window's edge apart). From the repository root on the GPU
# machine (binaries in .gpu/, as tracer_env.sh). Modes, $ROUNDS rounds, the order rotated:
#   kind      detached between windows, the RUNTIME and DRIVER kinds recorded whole (what a detached
#             window records: CUPTI's per-call records give none after a re-attach)
#   attached  --between-windows attached: CUPTI attached all along, its own records call by call, as
#             `record`'s defaults (its paused steps carry the attached floor, ~1 %, so its ratio reads low)
# One JSON per run and the figures in $O (default /tmp/wc), packed into $OUT/window_cost.tgz.
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; O=${O:-/tmp/wc}; mkdir -p $O
P="python3 $R/bench/gpu/live/llama_cost.py"; FIG="python3 $R/bench/gpu/live/cost_llama_figures.py"
PIN=${PIN:-taskset -c 2-9}; ROUNDS=${ROUNDS:-2}; REPS=${REPS:-16}; EVERY=${EVERY:-1}; FOR=${FOR:-0.3}
MODES=${MODES:-kind attached}
trap '[ -n "$OUT" ] && tar czf $OUT/window_cost.tgz --exclude="*.sqlite*" -C $O .' EXIT
flag_of() { [ $1 = attached ] && echo "--between-windows attached"; }
for r in $(seq 1 $ROUNDS); do
  modes=($MODES); n=${#modes[@]}; order=""
  for i in $(seq 0 $((n - 1))); do order="$order ${modes[$(((i + r - 1) % n))]}"; done
  for m in $order; do
    echo "== round $r $m $(date -u +%T)"
    REPS=$REPS RESULT=$O/$m-$r.json timeout 240 $PIN $KS record $(flag_of $m) --every $EVERY --for $FOR -o $O/$m-$r.sqlite -- $P 2> $O/$m-$r.err
    echo "exit $?"; grep -v "^kernscope: record:" $O/$m-$r.err | grep -v Warning | tail -2
    python3 -c "import sqlite3,sys; print(dict(sqlite3.connect(sys.argv[1]).execute('select name, value from KERNSCOPE_TRACER_INFO where name in (\"api_records\", \"paused_cupti\", \"dropped_records\")').fetchall()))" $O/$m-$r.sqlite
    $FIG inside $O/$m-$r.sqlite $O/$m-$r.json $EVERY $FOR | tee $O/$m-$r.txt | grep -E "windows in|inside|paused|per window"
    rm -f $O/$m-$r.sqlite
  done
done
