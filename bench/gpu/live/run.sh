#!/bin/bash
# Live capture on a real GPU (issue 30). Run from the repository root on the GPU machine, with the
# kernscope binary and tracer in .gpu/ (tracer_env.sh). Each check prints PASS/FAIL lines.
#   windows   record --paused: windows the program opens itself (5 steps, start/stop, 0.3 s)
#   tail      --keep-last-steps 4 --when 'step > 3x p50': steps 40 and 70 sleep 50 ms
#   procs     record --paused with a child process: capture start/stop reaches both
#   cut       a program killed (SIGKILL) inside a window; capture to a pid that is gone
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions
export KS="$R/.gpu/bin/kernscope" LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/live}; mkdir -p $OUT
nvcc -std=c++17 -O2 -arch=sm_90 -I/usr/local/cuda/include $R/bench/gpu/live/live_windows.cu -o $OUT/live_windows -lnvToolsExt 2>/dev/null ||
  nvcc -std=c++17 -O2 -arch=sm_90 $R/bench/gpu/live/live_windows.cu -o $OUT/live_windows || exit 1
C="python3 $R/bench/gpu/live/check.py"
for check in ${*:-windows tail procs cut}; do
  echo "== $check"
  case $check in
    windows)
      $KS record --paused --session w --step-range decode_step -o $OUT/windows.sqlite -- $OUT/live_windows windows > $OUT/windows.json
      $C windows $OUT/windows.sqlite $OUT/windows.json $KS ;;
    tail)
      $KS record --keep-last-steps 4 --when 'step > 3x p50' --step-range decode_step -o $OUT/tail.sqlite -- $OUT/live_windows tail > $OUT/tail.json
      $C tail $OUT/tail.sqlite $OUT/tail.json $KS ;;
    procs)
      rm -f $OUT/procs-*.sqlite
      $KS record --paused --session p -o "$OUT/procs-%p.sqlite" -- $OUT/live_windows procs 3 &
      sleep 1.5; $KS capture status p; $KS capture start p; sleep 0.5; $KS capture stop p; wait
      $C procs $OUT/procs-*.sqlite ;;
    cut)
      $KS record --paused --session c -o $OUT/cut.sqlite -- $OUT/live_windows loop 30 &
      sleep 1.5; $KS capture start c; sleep 1.5
      pid=$(ls $KERNSCOPE_RUNTIME_DIR/c | sed 's/.sock//'); kill -9 $pid; wait
      $C cut $OUT/cut.sqlite $KS
      $KS capture status $pid; echo "capture to the gone pid: exit $? (expected 2)" ;;
  esac
done
