#!/bin/bash
# Programs with a KNOWN bottleneck, each as a "before" and an "after" where the fix is really made (issue 46:
# the report's first action and its predicted saving, checked against the measured saving). Each variant is
# run untraced ROUNDS times (interleaved: round r runs every program's before then after) and once under
# `kernscope record` with its defaults; every run writes the program's own truth (JSON, its own clock).
#
#   program        before                                               after                                      expected bottleneck (before)
#   pageable_d2h   pageable_d2h.cu: 4 kernels x 1 ms, then a 704-byte    pinned buffers, cudaMemcpyAsync + event,   blocked: the pageable D2H copy waits for the GPU,
#                  D2H cudaMemcpyAsync into malloc'd memory (returns     step i's result read after step i+1 is     so the 3 ms "prepare" cannot overlap it;
#                  when copied), then 3 ms of host work in NVTX          launched (<= 2 steps in flight)            ~7 ms -> ~4 ms (GPU-bound)
#                  "prepare"
#   python_gaps    python_gaps.py: ~3 ms of pure Python (a loop over a   the Python work removed                    host: unannotated Python between launches, GPU idle;
#                  list, no annotation) then an eager 8 x Linear(2048)                                              saving ~ the Python time (~3 ms)
#                  + GELU bf16 forward (16 x 1024 tokens), .item()
#   warmup50x      warmup50x.py: 4 bf16 8192^3 matmuls + synchronize    the one-time set-up before the loop         steady: GPU (GEMM); the first step ~50x a steady
#                  a step; the FIRST "step" range also does a one-time  (outside any range)                        one (a one-time cost, not a steady one)
#                  set-up (4 GiB alloc, 2000 tiny kernels, host loop)
#                  sized to 49x the steady step
#
# NVTX: steps are ranges "step", warm-up steps "warmup" (pageable_d2h, python_gaps: 3 of them); warmup50x has no
# "warmup" range: its 3 warm-up steps run unannotated, then every step is a "step". Truth: each program prints
# STEP_MS (wall of the measured loop between two device synchronizations / steps) and STEP_MEDIAN_MS (median of
# the per-step host walls), warmup50x also FIRST_MS and STEADY_MS, and writes them with every step's time as JSON.
#
# usage: bench/gpu/bottlenecks/run.sh prepare      (here, from the repository root: fills .gpu/ through
#                                                  bench/gpu/accounting/run.sh prepare; carry .gpu)
#        bench/gpu/bottlenecks/run.sh [PROGRAM...] (on the GPU machine, from the repository root; default all three)
# Environment: ROUNDS (3 untraced runs per variant), STEPS (40), WARMUP (3), LIMIT (120 s per run), HARD (420:
# no run starts after HARD seconds), MAX_XZ (1000000: a traced run whose xz-compressed trace is larger is
# redone with half the steps, down to 10), PIN (CPU pinning prefix, "taskset -c 2-9" where that works).
# Writes under $OUT (or /tmp/bottlenecks/out): log.txt, steps.tsv (program, variant, run, traced, steps,
# step_ms, step_median_ms, first_ms, steady_ms) and bottlenecks.tar: NAME.VARIANT.sqlite.xz (the traced run),
# truth.json (per program and variant: the traced run's step times, the untraced runs' medians, the machine)
# and runs/*.json (every run's own JSON).
# Seen on an H100 (2026-12-06): 14 s of build, 92 s in all (about 2.7 minutes of device time with the start).
# Results: results/ here (steps.tsv, log, every run's JSON) and tests/fixtures/bottlenecks/ (traces, truth.json).
if [ "${1:-}" = prepare ]; then
  exec bash "$(dirname "$0")/../accounting/run.sh" prepare
fi
START=$(date +%s)
ALL="pageable_d2h python_gaps warmup50x"
PROGS="${*:-$ALL}"
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-40}
WARMUP=${WARMUP:-3}
LIMIT=${LIMIT:-120}
HARD=${HARD:-420}
MAX_XZ=${MAX_XZ:-1000000}
if [ ! -x .gpu/bin/kernscope ] && [ -f .gpu/pack.tar.xz ]; then
  python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
fi
source "$(dirname "$0")/../tracer_env.sh"
B=$R/bench/gpu/bottlenecks
T=/tmp/bottlenecks
O=${OUT:-$T/out}
rm -rf "$T" && mkdir -p "$T/bin" "$T/run" "$T/keep/runs" "$O" || exit 1
if [ -z "${PIN+x}" ]; then taskset -c 2-9 true 2>/dev/null && PIN="taskset -c 2-9" || PIN=""; fi
export PYTHONUNBUFFERED=1
LOG=$O/log.txt
TSV=$O/steps.tsv
printf "program\tvariant\trun\ttraced\tsteps\tstep_ms\tstep_median_ms\tfirst_ms\tsteady_ms\n" > "$TSV"
say() { echo "$@" | tee -a "$LOG"; }
elapsed() { echo $(( $(date +%s) - START )); }

say "== machine ($(date -u +%FT%TZ))"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
  nvidia-smi | grep -o "CUDA Version: [0-9.]*"
  nvcc --version | tail -1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
  echo "cores $(nproc), pin '${PIN}', kernscope $(md5sum "$R/.gpu/bin/kernscope" | cut -c1-12), tracer $(md5sum "$KERNSCOPE_TRACER_LIB" | cut -c1-12)"
} 2>&1 | tee -a "$LOG"
python3 - "$T/machine.json" "$PIN" "$R/.gpu/bin/kernscope" "$KERNSCOPE_TRACER_LIB" <<'EOF'
import datetime, hashlib, json, subprocess, sys
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e: return f"? ({e})"
name, driver, mem = (sh("nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader").split(", ") + ["?"] * 3)[:3]
md5 = lambda p: hashlib.md5(open(p, "rb").read()).hexdigest()[:12]
json.dump({"gpu": name, "driver": driver, "gpu_memory": mem,
           "cuda": sh("nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | cut -d' ' -f3"),
           "nvcc": sh("nvcc --version | tail -1"),
           "torch": sh("python3 -c 'import torch; print(torch.__version__)'"),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "cores": int(sh("nproc") or 0), "pin": sys.argv[2],
           "kernscope_md5": md5(sys.argv[3]), "tracer_md5": md5(sys.argv[4])}, open(sys.argv[1], "w"), indent=1)
EOF

say "== build"
nvcc -O2 -std=c++17 -arch=sm_90 "$B/pageable_d2h.cu" -o "$T/bin/pageable_d2h" > "$T/pageable_d2h.build" 2>&1 \
  || { say "build of pageable_d2h failed:"; tee -a "$LOG" < "$T/pageable_d2h.build"; }
say "built in $(elapsed) s"

# cmd PROGRAM VARIANT: the program's command line (steps, warm-up and --json are added by one).
cmd() {
  case "$1" in
    pageable_d2h) echo "$T/bin/pageable_d2h $2" ;;
    python_gaps) echo "python3 $B/python_gaps.py $2" ;;
    warmup50x) echo "python3 $B/warmup50x.py $2" ;;
  esac
}
declare -A BROKEN
# one PROGRAM VARIANT RUN TRACED(yes|no) STEPS: runs it, appends its step times to the TSV; a traced run leaves
# its trace xz-compressed in $T/keep/PROGRAM.VARIANT.sqlite.xz and its JSON in $T/run/PROGRAM.VARIANT.traced.json.
one() {
  local prog=$1 variant=$2 run=$3 traced=$4 steps=$5 key="$1.$2"
  [ -n "${BROKEN[$key]:-}" ] && return 1
  if [ "$(elapsed)" -gt "$HARD" ]; then say "[$key $run] skipped: $(elapsed) s spent (HARD $HARD)"; return 1; fi
  local tag=$run; [ "$traced" = yes ] && tag=traced
  local json=$T/run/$key.$tag.json log=$T/run/$key.$tag.log c
  c="$(cmd "$prog" "$variant") --steps $steps --warmup $WARMUP --json $json"
  rm -f "$json"
  local t0; t0=$(date +%s.%N)
  if [ "$traced" = yes ]; then
    rm -f "$T/run/$key"-*.sqlite
    timeout "$LIMIT" $PIN $K record -o "$T/run/$key-%p.sqlite" -- $c > "$log" 2>&1
  else
    timeout "$LIMIT" $PIN $c > "$log" 2>&1
  fi
  local rc=$? secs; secs=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
  { echo "--- $key $tag rc=$rc ${secs}s"; grep -v "^\s*$" "$log" | tail -4; } >> "$LOG"
  if [ ! -s "$json" ]; then
    say "[$key $tag] FAILED rc=$rc; last lines:"; tail -25 "$log" | tee -a "$LOG"
    [ "$run" = 1 ] && BROKEN[$key]=1
    return 1
  fi
  cp "$json" "$T/keep/runs/$key.$tag.json"
  python3 - "$json" "$prog" "$variant" "$tag" "$traced" >> "$TSV" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
g = lambda k: t.get(k, "NA")
print("\t".join(map(str, [sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], t["steps"], g("step_ms"), g("step_ms_median"), g("first_step_ms"), g("steady_step_ms")])))
EOF
  local line; line=$(grep -E "STEP_MS=" "$log" | tail -1)
  local tr=""
  if [ "$traced" = yes ]; then
    local f; f=$(ls -S "$T/run/$key"-*.sqlite 2>/dev/null | head -1)
    if [ -n "$f" ]; then
      local raw; raw=$(stat -c %s "$f")
      xz -9 -T4 -c "$f" > "$T/keep/$key.sqlite.xz"
      mv "$f" "$T/run/$key.sqlite"; rm -f "$T/run/$key"-*.sqlite
      tr=" trace ${raw} bytes, $(stat -c %s "$T/keep/$key.sqlite.xz") xz"
    else
      tr=" NO TRACE"
    fi
  fi
  say "[$key $tag] (${secs} s) ${line#*; }$tr"
}
# traced PROGRAM VARIANT: one traced run, redone with half the steps while its trace is over MAX_XZ compressed.
traced() {
  local steps=$STEPS
  while :; do
    one "$1" "$2" traced yes "$steps" || return
    local sz; sz=$(stat -c %s "$T/keep/$1.$2.sqlite.xz" 2>/dev/null || echo 0)
    [ "$sz" -le "$MAX_XZ" ] && break
    [ "$steps" -le 10 ] && { say "[$1.$2] trace still $sz bytes at $steps steps: kept"; break; }
    steps=$(( steps / 2 )); say "[$1.$2] trace $sz bytes over $MAX_XZ: again with $steps steps"
  done
  cp "$T/run/$1.$2.traced.json" "$T/keep/runs/$1.$2.traced.json"
}

for r in $(seq 1 "$ROUNDS"); do
  say "== untraced round $r ($(elapsed) s)"
  for p in $PROGS; do for v in before after; do one "$p" "$v" "$r" no "$STEPS"; done; done
done
say "== traced ($(elapsed) s)"
for p in $PROGS; do for v in before after; do traced "$p" "$v"; done; done

say "== truth.json"
python3 - "$T/machine.json" "$T/keep/runs" "$T/keep/truth.json" "$PROGS" <<'EOF' | tee -a "$LOG"
import glob, json, os, statistics, sys
machine = json.load(open(sys.argv[1]))
runs, out, progs = sys.argv[2], sys.argv[3], sys.argv[4].split()
med = lambda xs: round(statistics.median(xs), 4) if xs else None
keys = ("step_ms", "step_ms_median", "first_step_ms", "steady_step_ms", "python_ms_median")
truth = {"machine": machine, "programs": {}}
for p in progs:
    entry = {}
    for v in ("before", "after"):
        e = {}
        tf = f"{runs}/{p}.{v}.traced.json"
        if os.path.exists(tf):
            t = json.load(open(tf))
            e["steps"] = t["steps"]
            e["traced"] = {k: t[k] for k in keys if k in t}
            e["traced"]["step_ms_each"] = t["step_ms_each"]
            e["trace"] = f"{p}.{v}.sqlite.xz"
        un = [json.load(open(f)) for f in sorted(glob.glob(f"{runs}/{p}.{v}.[0-9]*.json"))]
        if un:
            u = {}
            for k in keys:
                xs = [t[k] for t in un if k in t]
                if xs:
                    u[k + "_runs"] = xs
                    u[k] = med(xs)
            e["untraced"] = u
            e.setdefault("steps", un[0]["steps"])
        entry[v] = e
    b, a = entry["before"].get("untraced", {}), entry["after"].get("untraced", {})
    key = "steady_step_ms" if p == "warmup50x" else "step_ms_median"
    if key in b and key in a:
        entry["measured_saving_ms"] = {"untraced_" + key: round(b[key] - a[key], 4)}
        if p == "warmup50x":
            entry["measured_saving_ms"]["untraced_first_step_ms"] = round(b["first_step_ms"] - a["first_step_ms"], 4)
            entry["measured_saving_ms"]["untraced_step_ms_mean_over_run"] = round(b["step_ms"] - a["step_ms"], 4)
    truth["programs"][p] = entry
json.dump(truth, open(out, "w"), indent=1)
for p, entry in truth["programs"].items():
    for v in ("before", "after"):
        e = entry[v]
        print(p, v, "steps", e.get("steps"), "traced", {k: x for k, x in e.get("traced", {}).items() if k != "step_ms_each"},
              "untraced", {k: x for k, x in e.get("untraced", {}).items() if not k.endswith("_runs")})
    print(p, "saving", entry.get("measured_saving_ms"))
EOF

say "== account (orientation; $(elapsed) s)"
for f in "$T"/run/*.sqlite; do
  [ -f "$f" ] || continue
  say "--- $(basename "$f")"
  timeout 60 $K account "$f" 2>&1 | head -25 | tee -a "$LOG" > /dev/null
done
(cd "$T/keep" && tar -cf "$O/bottlenecks.tar" .) && say "bottlenecks.tar: $(stat -c %s "$O/bottlenecks.tar") bytes"
ls -l "$T/keep" | tee -a "$LOG"
say "== step times (ms) from steps.tsv"
column -t "$TSV" 2>/dev/null || cat "$TSV"
say "== done in $(elapsed) s"
