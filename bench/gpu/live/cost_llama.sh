#!/bin/bash
# What kernscope's tracer costs on the launch-bound eager Llama decode (issue 30, item 4), on a workload that
# holds its step time (llama_cost.py: the shared eager Llama, batch 1, prompt 512, 64-step generations, every
# measured step at a KV length the warm-up ran). Run from the repository root on the GPU machine, with
# .gpu/bin (kernscope, libkernscope_tracer.so), .gpu/lib (libraries they need) and .gpu/tools (the shared
# tools: gpu-nsys-env.sh and its deb/) carried.
#   PHASES="check diag alternate sampled rounds graph" (default: all but graph), each:
#   check      kernscope record --help, a tiny traced run and `info` on it; the GPU, host and clocks
#   diag       llama_cost.py DIAG=1: why llama_live.py's steps jumped from ~12 to ~56 ms after 8 steps
#   alternate  one process, record --every-steps $EVERY_STEPS --steps $WIN_STEPS over $ALT_REPS generations:
#              each step's time inside a window vs paused (cost_llama_figures.py inside)
#   sampled    one process, record --every $EVERY --for $FOR (time windows) over $ALT_REPS generations
#   rounds     whole programs, rounds $FIRST..$LAST (stops starting rounds after $BUDGET_S seconds of this
#              script), configurations $CONFIGS in an order rotated each round, each a fresh process pinned
#              with $PIN; one JSON line per run in $O/rounds.jsonl; round $FIRST keeps its defaults trace for
#              `kernscope steps` (launches per decode step)
#   graph      examples/decode_bench with --cuda-graph on (built here with nvcc): none, record --paused
#              --cuda-graph-trace graph, record --paused (node), record --cuda-graph-trace graph; rounds
#              1..$GRAPH_ROUNDS, order rotated, none started after $GRAPH_BUDGET_S seconds of this script
# Everything lands in $O (default /tmp/cl) and, packed, in $OUT/cost_llama.tgz when $OUT is set.
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; O=${O:-/tmp/cl}; mkdir -p $O /tmp/ks
PHASES=${PHASES:-check diag alternate sampled rounds}
PIN=${PIN:-taskset -c 2-9}
P="python3 $R/bench/gpu/live/llama_cost.py"
FIG="python3 $R/bench/gpu/live/cost_llama_figures.py"
CONFIGS=${CONFIGS:-none paused defaults kernel nsys}
FIRST=${FIRST:-1}; LAST=${LAST:-10}; BUDGET_S=${BUDGET_S:-540}
ALT_REPS=${ALT_REPS:-20}; EVERY_STEPS=${EVERY_STEPS:-40}; WIN_STEPS=${WIN_STEPS:-20}; EVERY=${EVERY:-2}; FOR=${FOR:-0.2}
has() { [[ " $PHASES " == *" $1 "* ]]; }
pack() { [ -n "$OUT" ] && tar czf $OUT/cost_llama.tgz --exclude='*.sqlite*' -C $O . 2>/dev/null; }
trap pack EXIT

if has check; then
  echo "== check $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node0)' ; nproc; uname -r
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
  $KS record --help | head -2
  $KS --version
  GEN=4 WARM=1 REPS=1 RESULT=$O/tiny.json $KS record -o $O/tiny.sqlite -- $P || { echo "the tiny traced run failed"; exit 1; }
  cut -c1-200 $O/tiny.json; echo
  $KS info $O/tiny.sqlite | head -40
  q $O/tiny.sqlite "select * from TARGET_INFO_GPU"
fi

if has diag; then
  echo "== diag $(date -u +%FT%TZ)"
  DIAG=1 $PIN $P 2>&1 | grep -v Warning | tee $O/diag.txt
fi

if has alternate; then
  echo "== alternate: record --every-steps $EVERY_STEPS --steps $WIN_STEPS, $ALT_REPS generations of 64 $(date -u +%FT%TZ)"
  REPS=$ALT_REPS RESULT=$O/alternate.json $PIN $KS record --every-steps $EVERY_STEPS --steps $WIN_STEPS \
    -o $O/alternate.sqlite -- $P 2> $O/alternate.err; tail -3 $O/alternate.err
  $FIG inside $O/alternate.sqlite $O/alternate.json | tee $O/alternate.txt
fi

if has sampled; then
  echo "== sampled: record --every $EVERY --for $FOR, $ALT_REPS generations of 64 $(date -u +%FT%TZ)"
  REPS=$ALT_REPS RESULT=$O/sampled.json $PIN $KS record --every $EVERY --for $FOR \
    -o $O/sampled.sqlite -- $P 2> $O/sampled.err; tail -3 $O/sampled.err
  $FIG inside $O/sampled.sqlite $O/sampled.json $EVERY $FOR | tee $O/sampled.txt
  rm -f $O/sampled.sqlite
fi

run_one() {  # run_one CONFIG ROUND: one whole program, its JSON line appended to rounds.jsonl
  local c=$1 r=$2 res=/tmp/ks/res.json t0 t1; rm -f $res
  t0=$(date +%s.%N)
  case $c in
    none) RESULT=$res $PIN $P > /dev/null 2>&1 ;;
    paused) RESULT=$res $PIN $KS record --paused -o /tmp/ks/p.sqlite -- $P > /dev/null 2>&1 ;;
    defaults) RESULT=$res $PIN $KS record -o /tmp/ks/d.sqlite -- $P > /dev/null 2>&1 ;;
    kernel) RESULT=$res $PIN $KS record --record kernel -o /tmp/ks/k.sqlite -- $P > /dev/null 2>&1 ;;
    nsys) RESULT=$res $PIN $NSYS profile --trace=cuda,nvtx --cuda-graph-trace=node --force-overwrite=true \
            -o /tmp/ks/n -- $P > /dev/null 2>&1 ;;
  esac
  t1=$(date +%s.%N)
  if [ $c = defaults ] && [ $r = $FIRST ] && [ -f /tmp/ks/d.sqlite ]; then
    $KS steps -f csv /tmp/ks/d.sqlite > $O/steps-defaults.csv 2> $O/steps-defaults.err
    $KS info /tmp/ks/d.sqlite > $O/info-defaults-r$r.txt 2>&1
  fi
  rm -f /tmp/ks/p.sqlite* /tmp/ks/d.sqlite* /tmp/ks/k.sqlite* /tmp/ks/n.*
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])) if __import__('os').path.exists(sys.argv[1]) else {}; r.pop('step_ms',None); \
r.update(round=int(sys.argv[2]), config=sys.argv[3], wall_s=round(float(sys.argv[5])-float(sys.argv[4]),1)); print(json.dumps(r))" \
    $res $r $c $t0 $t1 | tee -a $O/rounds.jsonl
}

if has rounds; then
  [[ " $CONFIGS " == *" nsys "* ]] && source $R/.gpu/tools/gpu-nsys-env.sh
  echo "== rounds $FIRST..$LAST of: $CONFIGS ($PIN) $(date -u +%FT%TZ)"
  read -ra C <<< "$CONFIGS"; n=${#C[@]}
  for r in $(seq $FIRST $LAST); do
    [ $SECONDS -gt $BUDGET_S ] && { echo "budget: stopped before round $r"; break; }
    for k in $(seq 0 $((n - 1))); do run_one ${C[$(((k + r - 1) % n))]} $r; done
  done
  $FIG rounds $O/rounds.jsonl $(ls $O/steps-defaults.csv 2>/dev/null)
fi

if has graph; then
  echo "== graph: decode_bench --cuda-graph on $(date -u +%FT%TZ)"
  [ -x /tmp/db ] || nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1
  DB="taskset -c 2-5 /tmp/db --layers 16 --hidden 2048 --ffn 5632 --output-len 128 --iters ${ITERS:-5} --cuda-graph on"
  tpot() { grep -o 'TPOT_ms=[0-9.]*' | cut -d= -f2; }
  G=(none paused_graph paused_node record_graph)
  for r in $(seq 1 ${GRAPH_ROUNDS:-8}); do
    [ $SECONDS -gt ${GRAPH_BUDGET_S:-$BUDGET_S} ] && { echo "budget: stopped before graph round $r"; break; }
    line="graph round $r:"
    for k in 0 1 2 3; do
      c=${G[$(((k + r - 1) % 4))]}
      case $c in
        none) t=$($DB 2>/dev/null | tpot) ;;
        paused_graph) t=$($KS record --paused --cuda-graph-trace graph -o /tmp/ks/g.sqlite -- $DB 2>/dev/null | tpot) ;;
        paused_node) t=$($KS record --paused -o /tmp/ks/g.sqlite -- $DB 2>/dev/null | tpot) ;;
        record_graph) t=$($KS record --cuda-graph-trace graph -o /tmp/ks/g.sqlite -- $DB 2>/dev/null | tpot) ;;
      esac
      rm -f /tmp/ks/g.sqlite*
      line="$line $c $t"
    done
    echo "$line (TPOT ms)" | tee -a $O/graph.txt
  done
fi
