#!/bin/bash
# Issue 19 on the GPU machine: kernscope's host sampler against py-spy on the eager Llama (the same
# workload once under each, at the same rate), compared function by function over the decode steps
# by bench/host_vs_pyspy.py; then the sampler's whole-program cost (no profiler vs `kernscope record`
# vs `record --sample cpu`), interleaved rounds, as many as fit the time budget.
#
# usage (repository root, GPU machine): bench/gpu/host_pyspy.sh
#   env: GEN (decode steps per run of the comparison, default 128: 2 x 128 decode steps with the
#        warm-up run), RATE (Hz, default 200), COST_GEN (default 64), ROUNDS (default 3),
#        BUDGET_S (no cost round starts when the last one would end past it, default 170), HOST_GROUPS
#        (kernscope groups compared, a regex on the collapsed root frame, default decode_step \[decode\]$)
# Needs: .gpu/bin + .gpu/lib (tracer_env.sh), .gpu/whl/py_spy-*.whl (`pip download py-spy --no-deps`: a
#        wheel is a zip, its binary is taken out, no pip or network needed), .gpu/tools/llama_decode_workload.py
# Writes to $OUT: compare.txt, cost.txt, host.txt (kernscope host's tables), kernscope.collapsed.gz,
#        pyspy.raw.gz (to redo the comparison elsewhere), report.html.gz (the report with its flame graphs)
set -u
source "$(dirname "$0")/tracer_env.sh"
OUT=${OUT:-/tmp/host-pyspy}
mkdir -p "$OUT"
GEN=${GEN:-128} RATE=${RATE:-200} COST_GEN=${COST_GEN:-64} ROUNDS=${ROUNDS:-3} BUDGET_S=${BUDGET_S:-170}
W=$R/.gpu/tools/llama_decode_workload.py
[ -f "$W" ] || W=$R/../shared/tools/llama_decode_workload.py
PY=$(python3 -c 'import sys; print(sys.executable)')  # the interpreter itself: py-spy cannot read a wrapper script
# The decode step's body: the two lines after `with nvtx.range(f"{tag}:decode_step")`.
L=$(grep -n 'decode_step")' "$W" | head -1 | cut -d: -f1)
THROUGH="^run \(.*llama_decode_workload\.py:($((L + 1))|$((L + 2)))\)$"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "python: $($PY --version 2>&1); workload $W; decode body lines $((L + 1))-$((L + 2))"

rm -rf /tmp/pyspy && python3 -m zipfile -e "$(ls "$R"/.gpu/whl/py_spy-*.whl | head -1)" /tmp/pyspy || { echo "py-spy: no wheel under .gpu/whl"; exit 1; }
PYSPY=$(find /tmp/pyspy -path '*scripts/py-spy' | head -1)
chmod +x "$PYSPY"
echo "py-spy: $("$PYSPY" --version)"

tpot() { grep -o "TPOT_ms=[0-9.]*" | head -1 | cut -d= -f2; }

echo "== comparison: GEN=$GEN, $RATE Hz"
rm -f /tmp/hp-*.sqlite
t=$SECONDS
echo "kernscope record --sample cpu:$RATE: TPOT $(GEN=$GEN $K record --sample cpu:$RATE -o /tmp/hp-%p.sqlite -- "$PY" "$W" 2>/dev/null | tpot) ms ($((SECONDS - t)) s)"
f=$(ls -t /tmp/hp-*.sqlite | head -1)
echo "sampler's own account: $(q "$f" "select name, value from KERNSCOPE_HOST_INFO")"
$K host --limit 12 "$f" > "$OUT/host.txt" 2>&1
head -60 "$OUT/host.txt"
$K host --format collapsed "$f" > /tmp/kernscope.collapsed
$K report --format html -o /tmp/report.html "$f" 2>&1 | tail -1
t=$SECONDS
echo "py-spy record -r $RATE --idle: TPOT $(GEN=$GEN "$PYSPY" record -r "$RATE" -f raw --idle --full-filenames -o /tmp/pyspy.raw -- "$PY" "$W" 2>/dev/null | tpot) ms ($((SECONDS - t)) s)"
python3 "$R/bench/host_vs_pyspy.py" /tmp/kernscope.collapsed /tmp/pyspy.raw --groups "${HOST_GROUPS:-decode_step \[decode\]$}" --through "$THROUGH" --resolve | tee "$OUT/compare.txt"
gzip -c /tmp/kernscope.collapsed > "$OUT/kernscope.collapsed.gz"
gzip -c /tmp/pyspy.raw > "$OUT/pyspy.raw.gz"
[ -f /tmp/report.html ] && gzip -c /tmp/report.html > "$OUT/report.html.gz"

echo "== cost: COST_GEN=$COST_GEN, up to $ROUNDS interleaved rounds (order rotated each round), budget ${BUDGET_S} s" | tee "$OUT/cost.txt"
variant() {
  case $1 in
    none) GEN=$COST_GEN "$PY" "$W" ;;
    record) GEN=$COST_GEN $K record -o /tmp/hc-%p.sqlite -- "$PY" "$W" ;;
    sample) GEN=$COST_GEN $K record --sample cpu -o /tmp/hs-%p.sqlite -- "$PY" "$W" ;;
  esac
}
order=(none record sample)
last=0
for ((r = 1; r <= ROUNDS; r++)); do
  if ((SECONDS + last > BUDGET_S)); then echo "round $r not started: ${SECONDS} s gone, a round takes ${last} s" | tee -a "$OUT/cost.txt"; break; fi
  start=$SECONDS
  line="round $r:"
  for v in "${order[@]}"; do
    t=$SECONDS
    line+=" $v $(variant $v 2>/dev/null | tpot) ms ($((SECONDS - t)) s)"
  done
  echo "$line" | tee -a "$OUT/cost.txt"
  order=("${order[@]:1}" "${order[0]}")
  last=$((SECONDS - start))
  rm -f /tmp/hc-*.sqlite
done
f=$(ls -t /tmp/hs-*.sqlite 2>/dev/null | head -1)
[ -n "$f" ] && echo "sampler's own account (100 Hz): $(q "$f" "select name, value from KERNSCOPE_HOST_INFO where name like 'sampler%'")" | tee -a "$OUT/cost.txt"
python3 - "$OUT/cost.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    for v, ms in re.findall(r"(none|record|sample) ([0-9.]+) ms", line):
        runs.setdefault(v, []).append(float(ms))
if "none" in runs:
    base = statistics.median(runs["none"])
    for v in ("none", "record", "sample"):
        if v in runs:
            m = statistics.median(runs[v])
            out = f"TPOT median {v}: {m:.3f} ms over {len(runs[v])} runs ({' '.join(map(str, runs[v]))}), {100 * (m / base - 1):+.1f} % vs none"
            print(out)
            open(sys.argv[1], "a").write(out + "\n")
PY
echo "total ${SECONDS} s"
