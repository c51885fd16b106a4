#!/bin/bash
# Paused with CUPTI detached between windows (issue 30) under PyTorch programs, on a real GPU: what
# detach_check.sh checks with a C++ loop, here with the Llama server demo and the eager Llama decode,
# windows opened from another shell while they run. From the repository root on the GPU machine
# (binaries in .gpu/, as tracer_env.sh). Prints PASS/FAIL lines.
#   serve  serve_demo.py under `record --paused` without --step-range (so CUPTI detaches): 2 workers,
#          4 clients for 20 s, two 2 s windows from outside; every request answered, each worker's
#          file holds both windows with kernels and NVTX ranges launched inside them, `report` reads it
#   llama  bench/gpu/llama_ab.py (NVTX ranges around steps) under `record --paused`, three 1 s
#          windows from outside; exit 0, kernels inside each window, decode steps found by `steps`
source "$(dirname "$0")/../tracer_env.sh"
export KERNSCOPE_RUNTIME_DIR=/tmp/ks-sessions LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS=$R/.gpu/bin/kernscope; OUT=${OUT:-/tmp/live}; mkdir -p $OUT; rm -f $OUT/dsrv-*.sqlite* $OUT/dllama.sqlite
PHASES=${PHASES:-serve llama}
check() {  # FILE NAME: windows, kernels launched inside each, NVTX ranges inside, the tracer's CUPTI note
  python3 - "$@" <<'PY'
import sqlite3, sys
path, name, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(path)
wins = db.execute("select start, end from KERNSCOPE_CAPTURE_WINDOWS order by start").fetchall()
info = dict(db.execute("select name, value from KERNSCOPE_TRACER_INFO").fetchall())
tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
apis = [t for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER") if t in tables]
per = []
for s, e in wins:
    e = e or 1 << 62
    # Launched inside: by the runtime call, or the driver call (cuLaunchKernel: Triton, cuBLASLt) that launched it.
    k = sum(db.execute(f"select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join {api} r on r.correlationId = k.correlationId "
                       "where r.start >= ? and r.start < ?", (s, e)).fetchone()[0] for api in apis)
    n = db.execute("select count(*) from NVTX_EVENTS where start >= ? and start < ?", (s, e)).fetchone()[0] if "NVTX_EVENTS" in tables else 0
    per.append((round((e - s) / 1e9, 3), k, n))
total = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
devices = db.execute("select count(*) from TARGET_INFO_GPU").fetchone()[0] if "TARGET_INFO_GPU" in tables else 0
# Kernels no launch inside a window accounts for: launched while paused, they ran once the window
# opened (CUPTI records a kernel when it runs). Allowed where they start within 1 ms of a window's
# opening (queued at the open); any other is a failure.
launched = " union ".join(f"select correlationId from {api}" for api in apis)
queued = other = 0
for cid, start, kernel in db.execute(f"select k.correlationId, k.start, s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.shortName "
                                     f"where k.correlationId not in ({launched})"):
    if any(0 <= start - s < 1_000_000 for s, _ in wins):
        queued += 1
        continue
    other += 1
    where = [(round((start - s) / 1e6, 3), round((start - (e or 0)) / 1e6, 3)) for s, e in wins]
    print(f"  kernel without a launch in a window: correlation {cid}, {kernel}, ms after each window's start and end {where}")
# Kernels whose launch call started outside every window: where the call started against them.
straddled = 0
for api in apis:
    for cid, start, end in db.execute(f"select r.correlationId, r.start, r.end from CUPTI_ACTIVITY_KIND_KERNEL k join {api} r on r.correlationId = k.correlationId"):
        if any(s <= start < (e or 1 << 62) for s, e in wins):
            continue
        near = min(wins, key=lambda w: abs(start - w[0]))
        straddled += 1 if start < near[0] <= end else 0
        print(f"  launched outside a window: correlation {cid}, its call [{(start - near[0]) / 1e6:+.3f}, {(end - near[0]) / 1e6:+.3f}] ms "
              f"from the nearest window's start")
ok = len(wins) == want and all(k > 0 and n > 0 for _, k, n in per) and sum(k for _, k, _ in per) + queued + straddled == total and other == 0 and devices >= 1
print(("PASS" if ok else "FAIL") + f" {name}: {len(wins)} windows (s, kernels launched inside, NVTX) {per}; {total} kernels in all, "
      f"{queued} launched before a window and run in its first ms, {straddled} by a call running when it opened; {devices} device row(s); "
      f"paused_cupti={info.get('paused_cupti')!r}; finalized={info.get('cupti_finalized')!r}")
PY
}
for phase in $PHASES; do
  case $phase in
    serve)
      echo "== serve (detached)"
      D="python3 $R/bench/gpu/live/serve_demo.py"
      $KS record --paused --session dsrv -o "$OUT/dsrv-%p.sqlite" -- $D serve --seconds 45 --workers 2 2> $OUT/dsrv.err &
      server=$!
      $D client --seconds 20 --concurrency 4 > $OUT/dclient.json &
      until python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8765',timeout=1)" 2>/dev/null; do sleep 1; done
      sleep 3; $KS capture window dsrv --duration 2s; sleep 4; $KS capture window dsrv --duration 2s; $KS capture status dsrv
      wait $server; echo "record exit $?"; wait
      echo "client: $(cat $OUT/dclient.json | head -c 400)"
      grep -v "^$" $OUT/dsrv.err | tail -6
      for f in $OUT/dsrv-*.sqlite; do
        check $f "worker $(basename $f)" 2
        $KS report $f > $OUT/dreport.txt 2>&1; echo "report exit $?: $(grep -m1 -i "recorded" $OUT/dreport.txt)"
      done ;;
    llama)
      echo "== llama (detached)"
      NVTX=1 PAIRS=60 STEPS=12 timeout 300 $KS record --paused --session dl -o $OUT/dllama.sqlite -- python3 $R/bench/gpu/llama_ab.py > $OUT/dllama.out 2> $OUT/dllama.err &
      pid=$!
      # Windows once the program's tracer listens (the model's load took over 25 s on some runs), then a few steps.
      for t in $(seq 1 120); do $KS capture status dl >/dev/null 2>&1 && break; sleep 1; done
      sleep 12
      for i in 1 2 3; do $KS capture window dl --duration 1s || echo "capture exit $?"; sleep 2; done
      wait $pid; echo "record exit $?"; grep -E "TPOT" $OUT/dllama.out | head -2; grep -v "^$" $OUT/dllama.err | tail -4
      check $OUT/dllama.sqlite llama 3
      $KS steps $OUT/dllama.sqlite 2>&1 | head -12 ;;
  esac
done
