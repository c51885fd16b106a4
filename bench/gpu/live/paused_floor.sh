#!/bin/bash
# What a paused tracer with CUPTI detached leaves in the program (issue 30 item 4: "paused ≤ 1 % over no
# tracer"), part by part, since whole processes drift by 10-40 % on these hosts (bench/RESULTS.md):
#   launch  launch_cost eager: the launching thread's CPU ns per launch, no tracer against `record --paused`
#           (never a window, CUPTI detached), $PAIRS pairs of processes on one pinned core, the order alternating
#   nvtx    launch_cost nvtx: ns per nvtxRangePushA/Pop pair, none against paused (NVTX stays routed to the
#           tracer's CUPTI), $NVTX_PAIRS pairs
#   llama   llama_cost.py (NVTX ranges around each step), none against paused, $LLAMA_PAIRS pairs: TPOT, CPU per
#           step, and the CPU time of kernscope's own threads ("ks-*") against the whole process's
#   late    launch_cost late: before and after the tracer in one process (the tracer injected by hand once
#           CUDA started, then SETTLE_S to detach), the after/before ratio of a paused process against that of
#           a process with nothing injected (the same schedule), $LATE_PAIRS pairs: the processes' drift cancels
#   llate   the same with the eager Llama (llama_cost.py LATE=1), $LLATE_PAIRS pairs: TPOT and CPU per step
# From the repository root on the GPU machine (binaries in .gpu/). Output: one line per process, then medians
# (and, for the paired in-process phases, the mean difference with its 95 % interval).
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; O=${O:-/tmp/pf}; mkdir -p $O
PHASES=${PHASES:-launch nvtx llama}; PAIRS=${PAIRS:-20}; NVTX_PAIRS=${NVTX_PAIRS:-8}; LLAMA_PAIRS=${LLAMA_PAIRS:-4}
LATE_PAIRS=${LATE_PAIRS:-24}; LATE_N=${LATE_N:-30000}; LATE_REPS=${LATE_REPS:-11}; LLATE_PAIRS=${LLATE_PAIRS:-8}
CORE=${CORE:-taskset -c 4}; PIN=${PIN:-taskset -c 2-9}
trap '[ -n "$OUT" ] && tar czf $OUT/paused_floor.tgz -C $O . 2>/dev/null' EXIT
rm -f $O/*.txt $O/*.err  # pairs are appended by index: a new run starts clean
export SETTLE_S=${SETTLE_S:-1.5}  # launch_cost waits this long after CUDA starts: the tracer detaches first
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o $O/launch_cost || exit 1
# KERNSCOPE_DEBUG_DETACH: each paused process says in paused-<session>.err that it detached before measuring (SETTLE_S).
paused() { KERNSCOPE_DEBUG_DETACH=1 $KS record --paused --session f$1 -o $O/f-$1.sqlite -- "${@:2}" 2>$O/paused-$1.err; }
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
    late) for i in $(seq 1 $LATE_PAIRS); do pair late $i $CORE $O/launch_cost late $LATE_N $LATE_REPS; done ;;
    llate) for i in $(seq 1 $LLATE_PAIRS); do
             for c in $([ $((i % 2)) = 1 ] && echo "none paused" || echo "paused none"); do
               if [ $c = none ]; then LATE=1 REPS=3 RESULT=$O/llate-$i-$c.json $PIN python3 $R/bench/gpu/live/llama_cost.py 2>/dev/null
               else LATE=1 REPS=3 RESULT=$O/llate-$i-$c.json paused LL$i $PIN python3 $R/bench/gpu/live/llama_cost.py; fi
               python3 -c "import json,sys; d=json.load(open(sys.argv[1])); b,a=d['tpot_ms_before'],d['tpot_ms_after']; cb,ca=d['cpu_ms_per_step_before'],d['cpu_ms_per_step_after']; print('llate', sys.argv[2], sys.argv[3], 'tpot_per_probe=%.5f tpot=%.5f cpu=%.5f tpot_ms_before=%.3f tpot_ms_after=%.3f cpu_ms_before=%.3f cpu_ms_after=%.3f injected=%s collections_per_step=%.2f gc_callbacks=%d gc_callbacks_us=%.2f' % (d['tpot_per_probe_after']/d['tpot_per_probe_before'], a/b, ca/cb, b, a, cb, ca, d['injected'], d['collections_per_step_after'], d['gc_callbacks'], d['gc_callbacks_us_per_collection']))" $O/llate-$i-$c.json $i $c | tee -a $O/llate.txt
             done
           done ;;
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
        m = re.search(r"(?<![\w])" + key + r"=([\d.]+)", line)  # whole key: probe= is not per_probe=
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
# In-process phases: each process's after/before ratio; the paused one's minus its pair's none (the drift over a
# process's life, as the paused one's before half, is in both). Mean with a 95 % t interval, median, range.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 15: 2.13, 20: 2.09, 30: 2.04}
for name, key in (("late", "wall"), ("late", "thread_cpu"), ("late", "probe"), ("late", "per_probe"), ("llate", "tpot"),
                  ("llate", "cpu"), ("llate", "tpot_per_probe")):
    d = rows(name, key)
    if len(d) < 2: continue
    diffs = sorted(v["paused"] - v["none"] for v in d.values())
    n, mean = len(diffs), st.mean(diffs)
    t = T95[max(k for k in T95 if k <= n - 1)]
    half = t * st.stdev(diffs) / n ** 0.5
    none = [v["none"] - 1 for v in d.values()]
    print(f"{name} {key} after/before, paused - none: {n} pairs, mean {mean:+.2%} (95 % interval {mean - half:+.2%} .. "
          f"{mean + half:+.2%}), median {st.median(diffs):+.2%}, range {diffs[0]:+.2%} .. {diffs[-1]:+.2%}; "
          f"none's own after/before median {st.median(none):+.2%}")
# Each paused process must have detached (KERNSCOPE_DEBUG_DETACH's "detached (" line), and an in-process one before
# its after half started (both on stderr, in order).
errs = sorted(f for f in os.listdir(o) if f.startswith("paused-") and f.endswith(".err"))
def detached_in_time(f):
    text = open(f"{o}/{f}").read()
    after = text.find("the after half starts")
    return "detached (" in text and (after < 0 or text.find("detached (") < after)
late = [f for f in errs if "the after half starts" in open(f"{o}/{f}").read()]
bad = [f for f in errs if not detached_in_time(f)]
print(f"paused processes: {len(errs)} ({len(late)} in-process), not detached (in time): {bad or 'none'}")
PY
