#!/bin/bash
# kernscope peaks on the GPU host: builds tools/kernscope-peaks for this GPU, measures (HBM read and
# copy bandwidth, BF16 and FP8 cuBLASLt GEMMs, NVML clocks), and prints the measured row beside the
# datasheet row data/gpu_peaks.tsv holds for the same GPU, with the ratio of each figure.
# Expect on an H100 SXM (../shared/reference/gpu-and-roofline.md, [M1]/[M2]): read ~2.9-3.1 TB/s of
# 3.35 (85-93 %), BF16 8192^3 ~750-800 TFLOP/s of 989 (76-81 %), FP8 ~1300-1450 of 1979.
#
# usage: bench/gpu/peaks_check.sh [OUT_DIR] [kernscope-peaks options...]   (run from the repository root)
R=$PWD
out=${1:-/tmp/kernscope_peaks}
shift || true
mkdir -p "$out" || exit 1
nvcc -O2 -std=c++17 -arch=native "$R/tools/kernscope-peaks/kernscope_peaks.cu" -lcublasLt -ldl -o "$out/kernscope-peaks" || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
"$out/kernscope-peaks" -o "$out/peaks.tsv" "$@" || exit 1
cat "$out/peaks.tsv"
echo
# Beside the datasheet: the built-in row whose match words all appear in the device name (the most
# words wins, as kernscope's matcher does; SM count breaks ties).
python3 - "$out/peaks.tsv" "$R/data/gpu_peaks.tsv" <<'PY'
import re, sys
def rows(path):
    lines = [l.rstrip("\n") for l in open(path) if l.strip() and not l.startswith("#")]
    head = lines[0].split("\t")
    return [dict(zip(head, l.split("\t"))) for l in lines[1:]]
def words(s): return re.findall(r"[a-z0-9]+", s.lower())
measured = rows(sys.argv[1])[0]
device = set(words(measured["name"].replace("(measured)", "")))
best = None
for r in rows(sys.argv[2]):
    w = words(r["match"])
    if r["match"] == "*" or not w or not set(w) <= device: continue
    sm_ok = r["sm_count"] in ("0", measured["sm_count"])
    key = (len(w), sm_ok)
    if best is None or key > best[0]: best = (key, r)
if best is None:
    sys.exit("no datasheet row in data/gpu_peaks.tsv matches " + measured["name"])
sheet = best[1]
print(f"{'':14}{'measured':>12}{'datasheet':>12}{'ratio':>8}   ({sheet['name']}: {sheet['source']})")
for col, unit in (("bandwidth_gbs", "GB/s"), ("fp16_bf16", "TFLOP/s"), ("fp8", "TFLOP/s")):
    m, s = measured[col], sheet[col]
    ratio = f"{100 * float(m) / float(s):.1f} %" if m != "-" and s != "-" else "-"
    print(f"{col:14}{m:>12}{s:>12}{ratio:>8}   {unit}")
PY
