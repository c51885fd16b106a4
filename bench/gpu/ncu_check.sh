#!/bin/bash
# Nsight Compute's DRAM bytes for examples/decode_bench's decode GEMVs against the bytes the program
# says each projection reads (its weights, bf16), through `kernscope record --backend ncu`.
# Each decode step runs per layer q, k, v, o, gate, up, down (cublasGemmEx, rows = 1) and then the
# LM head; ncu profiles the GEMM kernels inside the NVTX range measure:decode_step with caches
# flushed between replays (ncu's default), so each kernel reads its weights from DRAM once:
# expect every ratio DRAM read / weight bytes within a few % of 1 (reference [M1]: 1.001 for
# 14336x4096), and the per-step sums beside decode_bench's bytes_per_step_MiB line.
# Also prints kernscope's reading of the same CSV (roofline --ncu) for the GB/s it derives.
#
# usage: bench/gpu/ncu_check.sh [STEPS] [LAYERS]      (from the repository root on the GPU host)
# checks: "ratio" column within 0.95..1.10 for every GEMV (the script exits 1 otherwise), group sums
#         within 5 % of decode_bench's printed MiB, kernscope's Bytes equal to the CSV's read+write.
source "$(dirname "$0")/tracer_env.sh"
STEPS=${1:-2}
LAYERS=${2:-2}
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)}
[ -x "$NCU" ] || { echo "ncu not found (set NCU)"; exit 1; }
export NCU
OUT=${OUT:-/tmp/kernscope_ncu_check}
mkdir -p "$OUT" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
"$NCU" --version | tail -1
nvcc -O2 -std=c++17 -arch=native "$R/examples/decode_bench/decode_bench.cu" -lcublas -o "$OUT/decode_bench" || exit 1
# Small enough for ncu's replays: LAYERS layers, STEPS decode steps, no CUDA graph (kernels one by one).
ARGS="--layers $LAYERS --output-len $STEPS --prompt-len 64 --warmup 0 --iters 1 --cuda-graph off"
"$OUT/decode_bench" $ARGS | tee "$OUT/decode_bench.txt"
PER_STEP=$((7 * LAYERS + 1))
$K record --backend ncu -o "$OUT/db.sqlite" --ncu-nvtx "measure:decode_step/" \
  --ncu-kernels 'gemv|gemm|nvjet|xmma|cutlass' --ncu-launch-count $((PER_STEP * STEPS)) \
  -- "$OUT/decode_bench" $ARGS || exit 1
RAW="$OUT/db_raw.csv"
ls -la "$OUT"
python3 - "$RAW" "$OUT/decode_bench.txt" "$LAYERS" "$STEPS" <<'PY'
import csv, re, sys
raw, printed, layers, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# decode_bench's defaults (its header): hidden 4096, ffn 14336, heads 32, kv-heads 8, vocab 32000.
hidden, ffn, kv, vocab = 4096, 14336, 4096 // 32 * 8, 32000
layer = [("q", hidden * hidden), ("k", kv * hidden), ("v", kv * hidden), ("o", hidden * hidden),
         ("gate", ffn * hidden), ("up", ffn * hidden), ("down", hidden * ffn)]
step = [(n, 2 * e) for _ in range(layers) for n, e in layer] + [("lm_head", 2 * vocab * hidden)]
lines = [l for l in open(raw) if not l.startswith("==")]
rows = list(csv.reader(lines))
head, units, data = rows[0], rows[1], rows[2:]
col = {n: i for i, n in enumerate(head)}
assert units[col["dram__bytes_read.sum"]] == "byte", units[col["dram__bytes_read.sum"]]
num = lambda s: float(s.replace(",", ""))
# cuBLAS may add a split-K reduction kernel after a GEMM; the filter keeps GEMM kernels only.
gemm = [r for r in data if "splitKreduce" not in r[col["Kernel Name"]]]
print(f"{len(gemm)} profiled GEMM kernels, {len(step)} expected per step")
ok, groups = True, {}
for i, r in enumerate(gemm[: len(step) * steps]):
    name, expect = step[i % len(step)]
    read = num(r[col["dram__bytes_read.sum"]])
    ratio = read / expect
    ok &= 0.95 <= ratio <= 1.10
    g = {"q": "q+o", "o": "q+o", "k": "k+v", "v": "k+v", "gate": "gate+up+down", "up": "gate+up+down",
         "down": "gate+up+down", "lm_head": "lm_head"}[name]
    groups[g] = groups.get(g, 0) + read
    dur = num(r[col["gpu__time_duration.sum"]])
    print(f"{i:3} {name:8} {r[col['Kernel Name']][:48]:48} read {read:14,.0f} weights {expect:14,.0f} ratio {ratio:.4f}"
          f"  {read / dur:8.1f} GB/s")
m = re.search(r"q\+o=([\d.]+) k\+v=([\d.]+) gate\+up\+down=([\d.]+) lm_head=([\d.]+)", open(printed).read())
if m:
    # decode_bench prints the bytes of all its layers; this run has `layers` layers (same as printed).
    for g, mib in zip(("q+o", "k+v", "gate+up+down", "lm_head"), map(float, m.groups())):
        got = groups.get(g, 0) / steps / 2**20
        print(f"{g:14} ncu {got:10.1f} MiB/step   decode_bench {mib:10.1f} MiB/step   ratio {got / mib:.4f}")
        ok &= abs(got / mib - 1) < 0.05
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
status=$?
echo "== kernscope's reading of the same CSV (Bytes = DRAM read + write, FLOPs from the counters)"
$K roofline "$RAW" --ncu "$RAW" --limit 0 --format csv | head -40
exit $status
