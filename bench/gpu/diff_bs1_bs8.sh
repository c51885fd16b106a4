#!/bin/bash
# issue 14's third truth pair: the Llama decode workload at batch 1 and batch 8 under nsys, then
# `kernscope diff` and `compare` on them. What a person expects, and what the script prints to check:
#   - TPOT p50 of bs8 within a few per cent of bs1 (decode is memory-bound: the same weights read per
#     step), so `--fail-if "tpot_p50 > +25%"` passes;
#   - the GEMV/GEMM kernel mix changes (batch 8 turns some decode GEMVs into small GEMMs): new and
#     missing kernels in the diff, class totals moving between gemv and gemm;
#   - diff totals equal Python's sqlite3 sums over the two exports (checked below).
#
# usage: bench/gpu/diff_bs1_bs8.sh OUT_DIR      (run from the repository root on the GPU machine,
#        after the binaries are under .gpu/ as for the other scripts; needs torch + transformers)
source "$(dirname "$0")/tracer_env.sh"
if [ $# -ne 1 ]; then awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" >&2; exit 2; fi
OUT=$1
mkdir -p "$OUT"
# The shared tools: copied under .gpu/tools (carried to the GPU machine), else ../shared/tools.
T=$R/.gpu/tools; [ -f "$T/llama_decode_workload.py" ] || T=$R/../shared/tools
source "$T/gpu-nsys-env.sh"
for BS in 1 8; do
  BS=$BS "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o "$OUT/llama_bs$BS" \
    python3 "$T/llama_decode_workload.py" | tail -1
  "$NSYS" export --type=sqlite --force-overwrite=true -o "$OUT/llama_bs$BS.sqlite" "$OUT/llama_bs$BS.nsys-rep" > /dev/null
done
$K diff --limit 10 "$OUT/llama_bs1.sqlite" "$OUT/llama_bs8.sqlite" | tee "$OUT/diff.txt"
$K diff --format json --fail-if "tpot_p50 > +25%" --fail-if "class:gemv > +50%" \
  "$OUT/llama_bs1.sqlite" "$OUT/llama_bs8.sqlite" > "$OUT/diff.json"; echo "gate exit code: $?"
$K diff --format csv "$OUT/llama_bs1.sqlite" "$OUT/llama_bs8.sqlite" > "$OUT/diff_kernels.csv"
$K compare --label bs1 --label bs8 "$OUT/llama_bs1.sqlite" "$OUT/llama_bs8.sqlite" | tee "$OUT/compare.txt"
python3 - "$OUT" <<'PY'
import csv, json, sqlite3, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/diff_kernels.csv")))
for side, bs in (("A", 1), ("B", 8)):
    con = sqlite3.connect(f"{out}/llama_bs{bs}.sqlite")
    count, total = con.execute("SELECT COUNT(*), SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    got = (sum(int(r[f"Count {side}"]) for r in rows), sum(int(r[f"Total {side} (ns)"]) for r in rows))
    print(f"bs{bs}: diff counts/total {got}, sqlite3 {(count, total)}: {'EQUAL' if got == (count, total) else 'DIFFERENT'}")
doc = json.load(open(f"{out}/diff.json"))
for g in doc["gates"]:
    print(g["evidence"])
print("new kernels:", sum(1 for r in rows if r["Count A"] == "0"), "missing:", sum(1 for r in rows if r["Count B"] == "0"))
PY
