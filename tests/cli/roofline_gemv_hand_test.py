#!/usr/bin/env python3
"""The decode GEMV figures of `kernscope roofline` and `report`, derived by hand from the traces.

1. The Kineto sibling of the Llama trace (record_shapes): the GEMVs are the kernels of the aten::mm
   calls whose first operand has one row (a matrix times a vector; the longest kernel of the call
   when a split-K reduction follows it), their bytes the operands read and the output written once
   (2 bytes each, bf16). Bandwidth efficiency = bytes / kernel time / 4800 GB/s (H200 datasheet).
   "% of Roof" holds each launch to max(bytes / 4800 GB/s, FLOPs / 989.4 TFLOP/s) and, where that is
   under the 2 us latency floor, to min(2 us, its duration): the two differ by that floor only.
2. The nsys Llama trace (no shapes) with --model: the weight matrices of the config (hidden 2048,
   ffn 5632, 16 layers, 32 heads of 64, 8 KV heads, vocab 32000 untied, bf16) over the time of the
   matmul kernels launched inside each measure:decode_step range (sqlite3: cuBLASLt nvjet kernels,
   their split-K reductions and the CUTLASS sgemm of the rotary embedding), mean per step.
Usage: roofline_gemv_hand_test.py KERNSCOPE FIXTURES_DIR
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import defaultdict
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

K, FIX = sys.argv[1], sys.argv[2]
BW = 4800e9          # H200 HBM3e, datasheet
BF16_PEAK = 989.4e12  # H200 dense BF16, datasheet
FLOOR_NS = 2000.0
failures = 0


def check(name, got, want, tol):
    global failures
    ok = abs(got - want) <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {name}: kernscope {got}, by hand {want:.4f} (tolerance {tol})")
    failures += 0 if ok else 1


def run(*args):
    p = subprocess.run([K, *args], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(f"FAIL kernscope {' '.join(args)}: exit code {p.returncode}: {p.stderr.strip()}")
        sys.exit(1)
    return p.stdout


def percent_after(lines, prefix):
    """The first 'NN.N %' after `prefix` in the first summary line that holds it."""
    for line in lines:
        at = line.find(prefix)
        if at >= 0:
            m = re.search(r"([0-9.]+) %", line[at + len(prefix):])
            if m:
                return float(m.group(1)), line
    print(f"FAIL no line with '{prefix}' in: {lines}")
    sys.exit(1)


# ---- 1. Kineto: bandwidth efficiency and % of roof of the same GEMVs ------------------------------
kineto = os.path.join(FIX, "kineto", "llama_decode_h200_gen16.json.xz")
events = json.load(open_any(kineto))["traceEvents"]
mm = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"}
kernels = defaultdict(list)
for e in events:
    if e.get("cat") == "kernel":
        kernels[e["args"].get("External id")].append(e)
gemv_bytes = gemv_ns = ideal_ns = 0.0
launches = under_floor = 0
for ext, op in mm.items():
    (m, k), (k2, n) = op["args"]["Input Dims"]
    if m != 1:
        continue
    kernel = max(kernels[ext], key=lambda e: e["dur"])
    ns = kernel["dur"] * 1000
    nbytes = 2 * (m * k + k * n + m * n)
    raw = max(nbytes / BW * 1e9, 2 * m * n * k / BF16_PEAK * 1e9)
    launches += 1
    gemv_bytes += nbytes
    gemv_ns += ns
    if raw < FLOOR_NS:
        under_floor += 1
        ideal_ns += max(raw, min(FLOOR_NS, ns))
    else:
        ideal_ns += raw
efficiency = 100 * gemv_bytes / (gemv_ns / 1e9) / BW
of_roof = 100 * ideal_ns / gemv_ns
print(f"by hand: {launches} GEMV launches, {gemv_bytes:.0f} B in {gemv_ns:.0f} ns; {under_floor} under the floor")

out = json.loads(run("roofline", "--by", "class", "--format", "json", "--limit", "0", kineto))
summary = out["summary"]
got, line = percent_after(summary, "decode GEMV bandwidth efficiency")
check("GEMV bandwidth efficiency (Kineto)", got, efficiency, 0.051)
got, _ = percent_after([line], "against their roof they reach")
check("the same GEMVs' % of roof in the headline", got, of_roof, 0.051)
gemv_row = [r for r in out["rows"] if r["Name"] == "gemv"]
if len(gemv_row) != 1:
    print(f"FAIL no single gemv row: {gemv_row}")
    sys.exit(1)
check("gemv class row % of Roof", float(gemv_row[0]["% of Roof"]), of_roof, 0.051)
check("gemv class row count", int(gemv_row[0]["Count"]), launches, 0)
m = re.search(r"(\d+) of the (\d+) launches need less than", line)
check("launches under the floor", int(m.group(1)) if m else -1, under_floor, 0)
check("launches", int(m.group(2)) if m else -1, launches, 0)

# ---- 2. nsys + --model: weight matrices over the projection kernels' time ----------------------
hidden, ffn, layers, heads, head_dim, kv_heads, vocab = 2048, 5632, 16, 32, 64, 8, 32000
per_layer = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2 + 3 * hidden * ffn  # q, o, k, v, gate/up/down
weight_bytes = 2 * (layers * per_layer + hidden * vocab)  # + the untied LM head; bf16
nsys_gz = os.path.join(FIX, "nsys", "llama_decode_h200", "trace.sqlite.xz")
tmp = tempfile.mkdtemp()
try:
    db = os.path.join(tmp, "t.sqlite")
    with open_any(nsys_gz) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    con = sqlite3.connect(db)
    steps, ns = con.execute("""
        WITH steps AS (SELECT start s, end e, globalTid g FROM NVTX_EVENTS WHERE text = 'measure:decode_step')
        SELECT (SELECT count(*) FROM steps), sum(k.end - k.start)
        FROM CUPTI_ACTIVITY_KIND_KERNEL k
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
        JOIN steps ON r.globalTid = steps.g AND r.start >= steps.s AND r.start < steps.e
        JOIN StringIds n ON n.id = k.demangledName
        WHERE n.value LIKE 'nvjet%' OR n.value LIKE '%splitKreduce%' OR n.value LIKE '%sgemm%'""").fetchone()
    con.close()
finally:
    shutil.rmtree(tmp)
per_step_ns = ns / steps
projection = 100 * weight_bytes / (per_step_ns / 1e9) / BW
print(f"by hand: {weight_bytes} B of weight matrices per step, {steps} steps, {per_step_ns:.0f} ns of matmul kernels per step")
model = ["--model", os.path.join(FIX, "models", "llama_decode_workload.json"), "--prompt", "512", "--output-tokens", "65"]
out = json.loads(run("roofline", "--by", "class", "--format", "json", *model, nsys_gz))
got, line = percent_after(out["summary"], "decode GEMV bandwidth efficiency")
check("GEMV bandwidth efficiency (nsys, --model)", got, projection, 0.051)
said = any("no work per kernel; model-config gives each step's work" in s for s in out["summary"])
check("coverage line names the model config's step work", int(said), 1, 0)
m = re.search(r"([0-9.]+) GB of weight matrices per step", line)
check("weight matrices per step (GB)", float(m.group(1)) if m else -1, weight_bytes / 1e9, 0.0006)
m = re.search(r"in ([0-9.]+) ms of GEMV/GEMM kernels per step", line)
check("matmul kernel time per step (ms)", float(m.group(1)) if m else -1, per_step_ns / 1e6, 0.0006)
report = json.loads(run("report", "--format", "json", *model, nsys_gz))
figures = {f["name"]: f for f in report["speed_of_light"]["figures"]}
f = figures.get("decode GEMV bandwidth efficiency")
if not f:
    print(f"FAIL report has no GEMV figure: {list(figures)}")
    sys.exit(1)
check("report: GEMV figure's bytes", f["work"], weight_bytes, 0.5)
check("report: GEMV figure's time per step (ns)", f["time_ns"], per_step_ns, 0.5)
check("report: GEMV bandwidth efficiency", 100 * f["fraction"], projection, 0.0001)

if failures:
    print(f"{failures} checks failed")
    sys.exit(1)
print("decode GEMV figures equal the hand-derived ones")
