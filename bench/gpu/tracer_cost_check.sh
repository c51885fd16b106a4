#!/bin/bash
# Issue 18 on a real GPU: every trace states the tracer's cost, and a process that started CUDA but
# did nothing leaves no file. Run from the repository root on the GPU machine (see tracer_env.sh);
# about 2 minutes. Prints what it found beside what is expected; copies info/report/steps text to $OUT.
#   1. the eager Llama (GEN decode steps, default 32) under `kernscope record`: the tracer's
#      KERNSCOPE_TRACER_COST rows and the info keys the estimate matches on (sqlite), then the
#      "Tracer cost" lines of `info`, `report`'s "tracer:" lines and `steps --correct-tracer-cost`;
#      expected: a calibrated sentence "inflated by about X %" when data/tracer_cost.tsv has a row for
#      this GPU, CUPTI and the defaults, else "not estimated: no calibration for <GPU> ...".
#   2. python3 -c "import torch; torch.cuda.init()" under record: expected "no GPU activity (no file)"
#      and no .sqlite for that pid in the output folder.
#   3. torchrun --nproc_per_node 1 running a one-kernel script: one line per traced process; the
#      worker with its kernels; the parent, if it starts CUDA at all, as "no GPU activity (no file)".
source "$(dirname "$0")/tracer_env.sh"
OUT=${OUT:-/tmp/tracer_cost_out}
mkdir -p "$OUT"
W=/tmp/tracer_cost_check
rm -rf "$W"; mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
GEN=${GEN:-32}

echo "== 1. Llama, PROMPT=512 GEN=$GEN, under kernscope record (defaults)"
PROMPT=512 GEN=$GEN $K record -o "$W/llama-%p.sqlite" -- python3 "$R/.gpu/tools/llama_decode_workload.py" 2>&1 | grep -E "TPOT|TTFT|kernscope" | cut -c1-400
F=$(ls "$W"/llama-*.sqlite | head -1)
echo "trace: $F"
echo "tracer info (expected: recorded_kinds, cupti_api_version, host_cpu, command, timing_cost_ns):"
q "$F" "select name, value from KERNSCOPE_TRACER_INFO where name in ('recorded_kinds','cupti_api_version','host_cpu','command','timing_cost_ns','nvml_interval_ms')"
echo "tracer cost rows (globalTid & 0xffffff, site, calls, totalNs, programThread):"
q "$F" "select globalTid & 16777215, site, calls, totalNs, programThread from KERNSCOPE_TRACER_COST"
echo "launches per decode step (sqlite, expected ~695) and PROFILER_OVERHEAD rows:"
q "$F" "select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId where s.value like 'cudaLaunchKernel%'"
q "$F" "select count(*), sum(end - start) from PROFILER_OVERHEAD"
$K info "$F" > "$OUT/info.txt" 2>&1
sed -n '/^Tracer cost:/,/^Missing/p' "$OUT/info.txt"
$K report "$F" > "$OUT/report.txt" 2>&1
grep -E "tracer:|TPOT|steps:" "$OUT/report.txt" | cut -c1-400
$K steps --correct-tracer-cost "$F" > "$OUT/steps.txt" 2>&1
head -5 "$OUT/steps.txt" | cut -c1-250
grep -E "^Tracer:|decode step wall|TPOT" "$OUT/steps.txt" | cut -c1-400

echo "== 2. python3 -c 'import torch; torch.cuda.init()' under record (expected: no GPU activity (no file))"
mkdir -p "$W/init"
$K record -o "$W/init/init-%p.sqlite" -- python3 -c "import torch; torch.cuda.init(); print('cuda initialized:', torch.cuda.is_initialized())" 2>&1 | cut -c1-300
echo "rc=${PIPESTATUS[0]} (expected 2: no trace written); files in the output folder (expected none or only a .host- file):"
ls -la "$W/init"

echo "== 3. torchrun --nproc_per_node 1 (expected: the worker's file with its kernels; the parent, if CUDA started there, no file)"
mkdir -p "$W/run"
cat > "$W/one_kernel.py" <<'PY'
import torch
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
print("worker sum", float((x * 2).sum()))
PY
if command -v torchrun >/dev/null; then
  $K record -o "$W/run/run-%p.sqlite" -- torchrun --nproc_per_node 1 "$W/one_kernel.py" 2>&1 | grep -vE "^\s*$|WARNING|warn" | cut -c1-300
  ls -la "$W/run"
else
  echo "torchrun not on PATH: skipped"
fi
ls -la "$OUT"
