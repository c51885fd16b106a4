#!/bin/bash
# Issue 30, item 5: a server started under `kernscope record --paused`, windows opened from outside
# while requests flow, the workers' traces read by `report`. From the repository root on the GPU machine.
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; OUT=${OUT:-/tmp/live}; mkdir -p $OUT; rm -f $OUT/srv-*.sqlite*
D="python3 $R/bench/gpu/live/serve_demo.py"
$KS record --paused --step-range auto --session srv -o "$OUT/srv-%p.sqlite" -- $D serve --seconds 45 --workers 2 2> $OUT/srv.err &
$D client --seconds 20 --concurrency 4 > $OUT/client.json &
until curl -s http://127.0.0.1:8765 > /dev/null 2>&1 || python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8765',timeout=1)" 2>/dev/null; do sleep 1; done
echo "== server ready; windows opened while requests flow"
sleep 3; $KS capture status srv
$KS capture window srv --duration 2s; sleep 4
$KS capture window srv --steps 20; sleep 4
$KS capture status srv
wait
echo "== client"; cat $OUT/client.json
echo "== record"; grep -v "^$" $OUT/srv.err | tail -8
for f in $OUT/srv-*.sqlite; do
  echo "== report $f"; $KS report $f 2>&1 | head -30
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('windows:', c.execute('select id,start,end,openedBy,closedBy from KERNSCOPE_CAPTURE_WINDOWS').fetchall())" $f
done
