#!/bin/bash
# What a paused tracer with CUPTI detached leaves in the program (issue 30 item 4: "paused ≤ 1 % over no
# tracer"), part by part, since whole processes drift by 10-40 % on these hosts (bench/RESULTS.md):
#   launch  launch_cost eager: the launching thread's CPU ns per launch, no tracer against `record --paused`
#           (never a window, CUPTI detached), $PAIRS pairs of processes on one pinned core, the order alternating
#   nvtx    launch_cost nvtx: ns per nvtxRangePushA/Pop pair, none against paused (NVTX stays routed to the
#           tracer's CUPTI), $NVTX_PAIRS pairs
#   llama   llama_cost.py (NVTX ranges around each step), none against paused, $LLAMA_PAIRS pairs: TPOT, CPU per
#           step, and the CPU time of kernscope's own threads ("ks-*") against the whole process's
# From the repository root on the GPU machine (binaries in .gpu/). Output: one line per process, then medians.
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; O=${O:-/tmp/pf}; mkdir -p $O
PHASES=${PHASES:-launch nvtx llama}; PAIRS=${PAIRS:-20}; NVTX_PAIRS=${NVTX_PAIRS:-8}; LLAMA_PAIRS=${LLAMA_PAIRS:-4}
CORE=${CORE:-taskset -c 4}; PIN=${PIN:-taskset -c 2-9}
trap '[ -n "$OUT" ] && tar czf $OUT/paused_floor.tgz -C $O . 2>/dev/null' EXIT
rm -f $O/*.txt $O/paused.err  # pairs are appended by index: a new run starts clean
export SETTLE_S=${SETTLE_S:-1.5}  # launch_cost waits this long after CUDA starts: the tracer detaches first
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o $O/launch_cost || exit 1
# KERNSCOPE_DEBUG_DETACH: each paused process says in paused.err that it detached before measuring (SETTLE_S).
paused() { KERNSCOPE_DEBUG_DETACH=1 $KS record --paused --session f$1 -o $O/f.sqlite -- "${@:2}" 2>>$O/paused.err; }
pair() {  # PHASE I CMD...: none and paused, the order alternating with I
  local first=none second=paused
  [ $(($2 % 2)) = 1 ] && first=paused second=none
  for c in $first $second; do
    if [ $c = none ]; then out=$("${@:3}" 2>&1 | tail -1); else out=$(paused $1$2 "${@:3}" 2>&1 | tail -1); fi
    echo "$1 $2 $c $out" | tee -a $O/$1.txt
  done
}
for phase in $PHASES; do
  echo "== $phase $(date -u +%T)"
  case $phase in
    launch) for i in $(seq 1 $PAIRS); do pair launch $i $CORE $O/launch_cost eager 50000 9; done ;;
    nvtx) for i in $(seq 1 $NVTX_PAIRS); do pair nvtx $i $CORE $O/launch_cost nvtx 1000000 5; done ;;
    llama) for i in $(seq 1 $LLAMA_PAIRS); do
             for c in $([ $((i % 2)) = 1 ] && echo "none paused" || echo "paused none"); do
               if [ $c = none ]; then REPS=4 RESULT=$O/llama-$i-$c.json $PIN python3 $R/bench/gpu/live/llama_cost.py 2>/dev/null
               else REPS=4 RESULT=$O/llama-$i-$c.json paused L$i $PIN python3 $R/bench/gpu/live/llama_cost.py; fi
               python3 -c "import json,sys; d=json.load(open(sys.argv[1])); ks={k:v for k,v in d['threads_cpu_ms'].items() if k.startswith('ks-')}; print('llama', sys.argv[2], sys.argv[3], 'tpot_ms=%.3f cpu_ms_per_step=%.3f wall_s=%s process_cpu_ms=%.0f ks_threads_cpu_ms=%s' % (d['tpot_ms'], d['cpu_ms_per_step'], d['wall_s'], sum(d['threads_cpu_ms'].values()), ks))" $O/llama-$i-$c.json $i $c | tee -a $O/llama.txt
             done
           done ;;
  esac
done
python3 - $O <<'PY'
import re, statistics as st, sys, os
o = sys.argv[1]
def rows(name, key):
    path = f"{o}/{name}.txt"
    if not os.path.exists(path): return {}
    d = {}
    for line in open(path):
        m = re.search(key + r"=([\d.]+)", line)
        if m: d.setdefault(int(line.split()[1]), {})[line.split()[2]] = float(m.group(1))
    return {i: v for i, v in d.items() if len(v) == 2}
for name, key in (("launch", "thread_cpu_ns"), ("launch", "ns_per_kernel"), ("nvtx", "ns_per_pair"), ("llama", "tpot_ms"), ("llama", "cpu_ms_per_step")):
    d = rows(name, key)
    if not d: continue
    diffs = sorted(v["paused"] - v["none"] for v in d.values())
    rel = sorted(v["paused"] / v["none"] - 1 for v in d.values())
    none = st.median(v["none"] for v in d.values())
    print(f"{name} {key}: {len(d)} pairs, none median {none:.3f}; paused - none median {st.median(diffs):+.3f} "
          f"({st.median(rel):+.2%}; range {rel[0]:+.2%} .. {rel[-1]:+.2%})")
PY
