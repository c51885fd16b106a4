#!/bin/bash
# Paused with CUPTI detached between windows (issue 30), on a real GPU. Run from the repository root
# on the GPU machine; G names the folder with bin/kernscope, bin/libkernscope_tracer.so and lib/
# (default .gpu, as tracer_env.sh). Each check prints PASS/FAIL lines; phases:
#   detached  record --paused (no --step-range: detached), 6 start/stop windows and a timed one opened
#             by the program itself (live_windows detached): kernels, API records, NVTX ranges and
#             devices inside each window, window and kernel times in one clock; then cuptiFinalize on
#             the tracer's thread, CUPTI's per-call records (KERNSCOPE_DETACH_API=call, the quirk;
#             CALL_CHECK=0 skips it) and --between-windows attached
#   others    the existing live checks under the new tracer: windows (--step-range: attached), procs
#             and cut (detached), and --every 0.5 --for 0.2 (detached, timed windows)
#   launch    bench/gpu/launch_cost.cu eager: the launching thread's CPU time and instructions per
#             launch with no tracer, record --paused detached, and attached, $ROUNDS interleaved rounds
#   llama     the eager Llama decode (bench/gpu/llama_ab.py, NVTX=0, $PAIRS pairs of $STEPS steps: every
#             block alike here, nothing is ever recorded) with no tracer, record --paused detached and
#             attached, $LLAMA_ROUNDS rounds, the order rotating; one TPOT line per process
B=$(cd "$(dirname "$0")/.." && pwd); R=$PWD; G=${G:-$R/.gpu}
export KERNSCOPE_TRACER_LIB=$G/bin/libkernscope_tracer.so KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions
export KS="$G/bin/kernscope" LD_LIBRARY_PATH=$G/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/live}; mkdir -p $OUT
PHASES=${PHASES:-detached others launch}; ROUNDS=${ROUNDS:-4}; LLAMA_ROUNDS=${LLAMA_ROUNDS:-4}
PAIRS=${PAIRS:-10}; STEPS=${STEPS:-12}; PIN=${PIN:-taskset -c 2-9}
nvcc -std=c++17 -O2 -arch=sm_90 $B/live/live_windows.cu -o $OUT/live_windows || exit 1
C="python3 $B/live/check.py"
T="timeout 120"
for phase in $PHASES; do
  case $phase in
    detached)
      echo "== detached"
      KERNSCOPE_DEBUG_DETACH=1 $T $KS record --paused --session d -o $OUT/detached.sqlite -- $OUT/live_windows detached 6 > $OUT/detached.json 2> $OUT/detached.err
      echo "exit $?"; grep -v "^ok\|^kernscope: record:" $OUT/detached.err | head -20
      $C detached $OUT/detached.sqlite $OUT/detached.json $KS
      echo "== detached, cuptiFinalize on the tracer's thread (KERNSCOPE_DETACH_FINALIZE=thread)"
      KERNSCOPE_DETACH_FINALIZE=thread $T $KS record --paused --session dt -o $OUT/detached_thread.sqlite -- $OUT/live_windows detached 6 > $OUT/detached_thread.json 2> $OUT/detached_thread.err
      echo "exit $?"; grep -v "^ok\|^kernscope: record:" $OUT/detached_thread.err | head -20
      $C detached $OUT/detached_thread.sqlite $OUT/detached_thread.json $KS
      [ "${CALL_CHECK:-1}" = 1 ] && echo "== detached, API records switched call by call (KERNSCOPE_DETACH_API=call)" &&
      KERNSCOPE_DETACH_API=call $T $KS record --paused --session dc -o $OUT/detached_call.sqlite -- $OUT/live_windows detached 3 > $OUT/detached_call.json 2> $OUT/detached_call.err
      [ "${CALL_CHECK:-1}" = 1 ] && grep -v "^ok\|^kernscope: record:" $OUT/detached_call.err | head -20 &&
      $C detached $OUT/detached_call.sqlite $OUT/detached_call.json $KS
      echo "== attached (--between-windows attached)"
      $T $KS record --paused --between-windows attached --session a -o $OUT/attached.sqlite -- $OUT/live_windows detached 6 > $OUT/attached.json 2> $OUT/attached.err
      echo "exit $?"; grep -v "^ok\|^kernscope: record:" $OUT/attached.err | head -20
      $C detached $OUT/attached.sqlite $OUT/attached.json $KS ;;
    others)
      echo "== windows (--step-range decode_step: attached)"
      $T $KS record --paused --session w --step-range decode_step -o $OUT/windows.sqlite -- $OUT/live_windows windows > $OUT/windows.json 2>$OUT/windows.err
      $C windows $OUT/windows.sqlite $OUT/windows.json $KS
      python3 -c "import sqlite3,sys; print(dict(sqlite3.connect(sys.argv[1]).execute('select name, value from KERNSCOPE_TRACER_INFO').fetchall()).get('paused_cupti'))" $OUT/windows.sqlite
      echo "== procs (detached)"
      rm -f $OUT/procs-*.sqlite
      $T $KS record --paused --session p -o "$OUT/procs-%p.sqlite" -- $OUT/live_windows procs 3 &
      sleep 1.5; $KS capture status p; $KS capture start p; sleep 0.5; $KS capture stop p; wait
      $C procs $OUT/procs-*.sqlite
      echo "== cut (detached, SIGKILL inside a window)"
      $T $KS record --paused --session c -o $OUT/cut.sqlite -- $OUT/live_windows loop 30 &
      sleep 1.5; $KS capture start c; sleep 1.5
      pid=$(ls $KERNSCOPE_RUNTIME_DIR/c | sed 's/.sock//'); kill -9 $pid; wait
      $C cut $OUT/cut.sqlite $KS
      echo "== every 0.5 s for 0.2 s (detached)"
      $T $KS record --every 0.5 --for 0.2 -o $OUT/every.sqlite -- $OUT/live_windows loop 3 2>$OUT/every.err
      grep -v "^kernscope: record:" $OUT/every.err | head -5
      python3 - $OUT/every.sqlite <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
wins = db.execute("select start, end, openedBy, closedBy from KERNSCOPE_CAPTURE_WINDOWS order by start").fetchall()
total = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
inside = sum(db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join CUPTI_ACTIVITY_KIND_RUNTIME r on r.correlationId = k.correlationId "
                        "where r.start >= ? and r.start < ?", (w[0], w[1] or 1 << 62)).fetchone()[0] for w in wins)
info = dict(db.execute("select name, value from KERNSCOPE_TRACER_INFO").fetchall())
lengths = [(w[1] - w[0]) / 1e9 for w in wins if w[1]]
# Each window lasts what --for asks, to within a few ms (LiveCapture::tick measures the timer's wait from after
# the attach that opened a window: before, each closed one attach late, 0.208-0.217 s on an H200).
ok = len(wins) >= 4 and total == inside and total > 0 and all(0.199 <= x <= 0.205 for x in lengths)
print(("PASS" if ok else "FAIL") + f" --every: {len(wins)} windows {[round(x, 4) for x in lengths]} s (asked 0.2), {inside} of {total} kernels launched inside; {info.get('paused_cupti')}")
EOF
      ;;
    launch)
      nvcc -std=c++20 -O2 -arch=sm_90 $B/launch_cost.cu -o $OUT/launch_cost || exit 1
      for r in $(seq 1 $ROUNDS); do
        echo "== launch round $r $(date -u +%T)"
        echo -n "none     "; $PIN $OUT/launch_cost eager 50000 15
        echo -n "detached "; $T $KS record --paused --session l$r -o $OUT/l.sqlite -- $PIN $OUT/launch_cost eager 50000 15 2>/dev/null
        echo -n "attached "; $T $KS record --paused --between-windows attached --session m$r -o $OUT/l.sqlite -- $PIN $OUT/launch_cost eager 50000 15 2>/dev/null
      done ;;
    llama)
      none=""; detached="$KS record --paused --session q -o $OUT/q.sqlite --"
      attached="$KS record --paused --between-windows attached --session q -o $OUT/q.sqlite --"
      for r in $(seq 1 $LLAMA_ROUNDS); do
        order="none detached attached"
        [ $((r % 3)) = 2 ] && order="detached attached none"
        [ $((r % 3)) = 0 ] && order="attached none detached"
        for c in $order; do
          echo -n "llama round $r $c $(date -u +%T) "
          NVTX=0 PAIRS=$PAIRS STEPS=$STEPS timeout 120 ${!c} $PIN python3 $B/llama_ab.py 2>&1 | grep -E "^TPOT|Error|error" | tail -1
        done
      done ;;
  esac
done
