#!/bin/bash
# `kernscope record --gemm-shapes` on a small torch program of known bf16 matmuls
# (bench/gpu/gemm_shapes_prog.py), then `kernscope roofline --cublas-log` on the trace: the FLOPs of
# the kernels that cuBLAS's logs gave work to must equal the program's sum of 2*M*N*K per call,
# and each shape's FLOPs must land on kernels (by name) whose counts are that shape's repetitions.
# usage (repository root, GPU host): bench/gpu/gemm_shapes_check.sh        ~1 min; exits 1 on a mismatch
# prints: the program's shapes, kernscope's rows with source cublas-log, and "GEMM FLOPs: kernscope X,
# by hand Y" with PASS/FAIL; copies the CSV and logs' first lines into $OUT when set.
source "$(dirname "$0")/tracer_env.sh"
W=$(mktemp -d /tmp/kernscope_gemm_shapes.XXXXXX)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$K record --gemm-shapes -o "$W/mm.sqlite" -- python3 "$R/bench/gpu/gemm_shapes_prog.py" | tee "$W/prog.txt" || exit 1
ls -la "$W"
LT=$(ls "$W"/mm.cublaslt*.log 2>/dev/null | head -1)  # mm.cublaslt.log (or with the process id where -o has %p)
[ -s "$LT" ] || { echo "FAIL no cuBLASLt log in $W"; exit 1; }
$K roofline --cublas-log "$LT" --format csv --limit 0 "$W/mm.sqlite" >"$W/roofline.csv" 2>"$W/roofline.err" || { cat "$W/roofline.err"; exit 1; }
cat "$W/roofline.err"
if [ -n "${OUT:-}" ]; then
  cp "$W/roofline.csv" "$W/prog.txt" "$OUT/" 2>/dev/null
  head -c 20000 "$LT" >"$OUT/cublaslt_head.log"
fi
python3 - "$W/prog.txt" "$W/roofline.csv" <<'PY'
import csv, sys
shapes, total = [], None
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "shape":
        shapes.append(tuple(int(x) for x in f[1:5]))
    if f and f[0] == "total_flops":
        total = int(f[1])
by_hand = sum(2 * m * n * k * r for m, n, k, r in shapes)
assert by_hand == total, (by_hand, total)
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["Source"] == "cublas-log"]
for r in rows:
    print(f"{r['Count']:>4} {r['FLOPs']:>14} {r['Name'][:90]}")
got = sum(int(r["FLOPs"] or 0) for r in rows)
ok = got == by_hand
print(f"GEMM FLOPs: kernscope {got}, by hand {by_hand}: {'PASS' if ok else 'FAIL'}")
# Per shape: a row whose FLOPs are a multiple of one call's 2*M*N*K by its count (kernels that
# only one shape used) names that shape; every shape should find such a row or share one.
for m, n, k, reps in shapes:
    one = 2 * m * n * k
    hits = [r for r in rows if int(r["FLOPs"] or 0) == one * int(r["Count"]) and int(r["Count"]) == reps]
    print(f"shape M={m} N={n} K={k} x{reps}: {one} FLOPs per call; kernel rows with exactly that: {len(hits)}"
          + (f" ({hits[0]['Name'][:60]})" if hits else " (shares its kernel with another shape, or a split-K helper took a slot)"))
sys.exit(0 if ok else 1)
PY
