#!/bin/bash
# The what-if pairs of issue 29 (item 3), measured for real: for each change, a "before" program and an
# "after" program where the change is made, each run untraced (its own printed per-step time) and under
# `kernscope record`, in interleaved rounds (round r: before, after untraced; then before, after traced).
#
#   pair          change           before                                     after
#   llama         graphs           llama_pair.py eager (StaticCache)           llama_pair.py graph (torch.cuda.CUDAGraph)
#   decode_bench  graphs           examples/decode_bench --cuda-graph off      --cuda-graph on
#   nosync        no-sync          nosync.cu before (cudaStreamSynchronize)    nosync.cu after (≤ 2 steps in flight)
#   copies        overlap-copies   copies.cu before (pageable cudaMemcpy)      copies.cu after (pinned, side stream, 2 buffers)
#
# Step time of a run: the program's own STEP_MS (llama, nosync, copies: wall of the measured loop between
# two device synchronizations / steps) or TPOT_ms (decode_bench: CUDA events around the measured decode
# loop / steps). Step groups: measure:decode_step (llama, decode_bench), measure:step (nosync, copies).
#
# usage: bench/gpu/whatif/run.sh prepare      (here, from the repository root: fills .gpu/ through
#                                             bench/gpu/accounting/run.sh prepare; carry .gpu)
#        bench/gpu/whatif/run.sh [PAIR...]    (on the GPU machine, from the repository root; default all four)
# Environment: ROUNDS (at most, 6), MIN_ROUNDS (5), DEADLINE (380) and HARD (500): a round after MIN_ROUNDS
# starts only if it would end before DEADLINE seconds from the start (by the last round's length), any round
# only if it would end before HARD; PIN (CPU pinning prefix, "taskset -c 2-9" where that works), LIMIT
# (seconds per program, 90). A variant that fails in round 1 is not run again.
# Writes under $OUT (or /tmp/whatif/out): steps.tsv (pair, variant, round, traced, step_ms), log.txt (the last
# lines of every program's output), and per pair traces_PAIR.tar: for each variant the traced run of the median
# round (by its traced step time), PAIR.VARIANT.sqlite.gz, with `kernscope steps` and `account --format json`
# of it (PAIR.VARIANT.steps.json.gz, PAIR.VARIANT.account.json.gz).
# Seen on an H200 (2026-11-27): 14 s of builds, then about 85 s a round (the two Llama variants most of it),
# 443 s for 5 rounds; about 8 minutes of device time for the call. Results: bench/RESULTS.md ("What if").
if [ "${1:-}" = prepare ]; then
  exec bash "$(dirname "$0")/../accounting/run.sh" prepare
fi
START=$(date +%s)
ALLPAIRS="llama decode_bench nosync copies"
PAIRS="${*:-$ALLPAIRS}"
ROUNDS=${ROUNDS:-6}
MIN_ROUNDS=${MIN_ROUNDS:-5}
DEADLINE=${DEADLINE:-380}
HARD=${HARD:-500}
LIMIT=${LIMIT:-90}
if [ ! -x .gpu/bin/kernscope ] && [ -f .gpu/pack.tar.xz ]; then
  python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
fi
source "$(dirname "$0")/../tracer_env.sh"
W=$R/bench/gpu/whatif
T=/tmp/whatif
O=${OUT:-$T/out}
rm -rf "$T" && mkdir -p "$T/bin" "$T/run" "$T/keep" "$O" || exit 1
if [ -z "${PIN+x}" ]; then taskset -c 2-9 true 2>/dev/null && PIN="taskset -c 2-9" || PIN=""; fi
LOG=$O/log.txt
TSV=$O/steps.tsv
printf "pair\tvariant\tround\ttraced\tstep_ms\n" > "$TSV"
say() { echo "$@" | tee -a "$LOG"; }

say "== machine ($(date -u +%FT%TZ))"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
  nvidia-smi | grep -o "CUDA Version: [0-9.]*"
  nvcc --version | tail -1
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" 2>&1 | tail -1
  echo "cores $(nproc), pin '${PIN}', kernscope $(md5sum "$R/.gpu/bin/kernscope" | cut -c1-12), tracer $(md5sum "$KERNSCOPE_TRACER_LIB" | cut -c1-12)"
} 2>&1 | tee -a "$LOG"

say "== build"
nvcc -O2 -std=c++17 -arch=sm_90 "$W/nosync.cu" -o "$T/bin/nosync" > "$T/nosync.build" 2>&1 &
nvcc -O2 -std=c++17 -arch=sm_90 "$W/copies.cu" -o "$T/bin/copies" > "$T/copies.build" 2>&1 &
nvcc -O2 -std=c++17 -arch=sm_90 "$R/examples/decode_bench/decode_bench.cu" -lcublas -o "$T/bin/decode_bench" > "$T/decode_bench.build" 2>&1 &
wait
for b in nosync copies decode_bench; do [ -x "$T/bin/$b" ] || { say "build of $b failed:"; cat "$T/$b.build" | tee -a "$LOG"; }; done
say "built in $(( $(date +%s) - START )) s"

# cmd PAIR VARIANT: the program's command line.
cmd() {
  case "$1.$2" in
    llama.before) echo "python3 $W/llama_pair.py eager" ;;
    llama.after) echo "python3 $W/llama_pair.py graph" ;;
    decode_bench.before) echo "$T/bin/decode_bench --warmup 1 --iters 1 --cuda-graph off" ;;
    decode_bench.after) echo "$T/bin/decode_bench --warmup 1 --iters 1 --cuda-graph on" ;;
    nosync.*) echo "$T/bin/nosync $2" ;;
    copies.*) echo "$T/bin/copies $2" ;;
  esac
}
declare -A BROKEN
# one PAIR VARIANT ROUND TRACED(yes|no): runs it, appends its step time to the TSV.
one() {
  local pair=$1 variant=$2 round=$3 traced=$4 key="$1.$2"
  [ -n "${BROKEN[$key]:-}" ] && return
  local log=$T/run/$key.r$round.$traced.log c; c=$(cmd "$pair" "$variant")
  local t0; t0=$(date +%s.%N)
  if [ "$traced" = yes ]; then
    rm -f "$T/run/$key.r$round"-*.sqlite
    PYTHONUNBUFFERED=1 timeout $LIMIT $PIN $K record -o "$T/run/$key.r$round-%p.sqlite" -- $c > "$log" 2>&1
  else
    PYTHONUNBUFFERED=1 timeout $LIMIT $PIN $c > "$log" 2>&1
  fi
  local rc=$? secs; secs=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
  local ms; ms=$(grep -o "STEP_MS=[0-9.]*\|TPOT_ms=[0-9.]*" "$log" | tail -1 | cut -d= -f2)
  [ "$pair" = decode_bench ] && ms=$(grep -o "TPOT_ms=[0-9.]*" "$log" | tail -1 | cut -d= -f2)
  { echo "--- $key round $round traced=$traced rc=$rc ${secs}s"; grep -v "^\s*$" "$log" | tail -4; } >> "$LOG"
  if [ -z "$ms" ]; then
    say "[$key r$round traced=$traced] FAILED rc=$rc; last lines:"; tail -25 "$log" | tee -a "$LOG"
    [ "$round" = 1 ] && BROKEN[$key]=1
    ms=NA
  fi
  printf "%s\t%s\t%s\t%s\t%s\n" "$pair" "$variant" "$round" "$traced" "$ms" >> "$TSV"
  local tr=""
  if [ "$traced" = yes ]; then
    tr=$(ls -S "$T/run/$key.r$round"-*.sqlite 2>/dev/null | head -1)
    if [ -n "$tr" ]; then mv "$tr" "$T/keep/$key.r$round.sqlite"; rm -f "$T/run/$key.r$round"-*.sqlite; tr=" trace $(du -m "$T/keep/$key.r$round.sqlite" | cut -f1) MB"
    else tr=" NO TRACE"; fi
  fi
  echo "[$key r$round traced=$traced] step_ms=$ms (${secs} s)$tr" | tee -a "$LOG"
}

r=1
while [ $r -le "$ROUNDS" ]; do
  now=$(( $(date +%s) - START ))
  if [ $r -gt 1 ] && { [ $(( now + ROUND_S )) -gt "$HARD" ] || { [ $r -gt "$MIN_ROUNDS" ] && [ $(( now + ROUND_S )) -gt "$DEADLINE" ]; }; }; then
    say "== stopping before round $r: ${now} s spent, a round takes ${ROUND_S} s (deadlines ${DEADLINE} s, hard ${HARD} s)"; break
  fi
  say "== round $r (${now} s)"
  rs=$(date +%s)
  for p in $PAIRS; do
    for tv in no yes; do
      for v in before after; do one "$p" "$v" $r $tv; done
    done
  done
  ROUND_S=$(( $(date +%s) - rs ))
  r=$((r + 1))
done

say "== keep (the traced run of the median round per pair and variant)"
mkdir -p "$T/bundle"
python3 - "$TSV" "$T/keep" "$T/bundle" > "$T/keep.list" <<'EOF'
import csv, os, statistics, sys
tsv, keep, bundle = sys.argv[1:4]
rows = [r for r in csv.DictReader(open(tsv), delimiter="\t") if r["traced"] == "yes" and r["step_ms"] != "NA"]
by = {}
for r in rows:
    by.setdefault((r["pair"], r["variant"]), []).append((float(r["step_ms"]), r["round"]))
for (p, v), xs in sorted(by.items()):
    xs = [x for x in xs if os.path.exists(f"{keep}/{p}.{v}.r{x[1]}.sqlite")]
    if not xs:
        continue
    xs.sort()
    ms, rnd = xs[(len(xs) - 1) // 2]
    print(f"{keep}/{p}.{v}.r{rnd}.sqlite {bundle}/{p}.{v}.sqlite {ms} {rnd}")
EOF
while read -r src dst ms rnd; do
  gzip -9 -c "$src" > "$dst.gz"
  $K steps --format json "$src" 2> "$dst.steps.err" | gzip -9 > "${dst%.sqlite}.steps.json.gz"
  $K account --format json "$src" 2> "$dst.account.err" | gzip -9 > "${dst%.sqlite}.account.json.gz"
  say "kept $(basename "$dst").gz: round $rnd, traced step ${ms} ms, $(stat -c %s "$dst.gz") bytes gzipped ($(du -m "$src" | cut -f1) MB raw); steps/account errors: $(cat "$dst.steps.err" "$dst.account.err" | head -2 | tr '\n' ' ' | cut -c1-200)"
  rm -f "$dst.steps.err" "$dst.account.err"
done < "$T/keep.list"
for p in $PAIRS; do
  ls "$T/bundle/$p".* > /dev/null 2>&1 || continue
  (cd "$T/bundle" && tar -cf "$O/traces_$p.tar" "$p".*) && say "traces_$p.tar: $(stat -c %s "$O/traces_$p.tar") bytes"
done

say "== step times (ms): median [min – max] over rounds; after/before = median of same-round ratios"
python3 - "$TSV" <<'EOF' | tee -a "$LOG"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
val = {}
for r in rows:
    if r["step_ms"] != "NA":
        val[(r["pair"], r["variant"], r["traced"], r["round"])] = float(r["step_ms"])
pairs = list(dict.fromkeys(r["pair"] for r in rows))
print(f"{'pair':13} {'traced':6} {'before':>26} {'after':>26} {'after/before':>13} n")
for p in pairs:
    for t in ("no", "yes"):
        cell = {}
        for v in ("before", "after"):
            xs = [x for (pp, vv, tt, _), x in val.items() if (pp, vv, tt) == (p, v, t)]
            cell[v] = f"{statistics.median(xs):.4f} [{min(xs):.4f} – {max(xs):.4f}]" if xs else "NA"
        rounds = sorted({k[3] for k in val if k[0] == p and k[2] == t})
        ratios = [val[(p, "after", t, r)] / val[(p, "before", t, r)] for r in rounds
                  if (p, "after", t, r) in val and (p, "before", t, r) in val]
        ratio = f"{statistics.median(ratios):.3f}" if ratios else "NA"
        print(f"{p:13} {t:6} {cell['before']:>26} {cell['after']:>26} {ratio:>13} {len(ratios)}")
EOF
say "== done in $(( $(date +%s) - START )) s"
