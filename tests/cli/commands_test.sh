#!/usr/bin/env bash
# End-to-end checks of the CLI on the bundled real trace: the numbers come from nsys's gold files.
set -eu
K=$1
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
LLAMA="$FIX/nsys/llama_decode_h200"
# A gold file by its plain name: the file, or its .xz (gold files over 4 kB are kept xz-compressed).
gold() { if [ -f "$1" ]; then cat "$1"; else xz -dc "$1.xz"; fi; }

# Bad input must be refused with exit code 2 (not merely fail: a crash fails too).
expect_refused() {  # expect_refused WHAT ARGS...
  local what=$1 rc=0
  shift
  "$K" "$@" >/dev/null 2>&1 || rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL: $what: exit code $rc, want 2"; exit 1; fi
}

# stats through the CLI equals nsys's CSV for several reports at once, written with --output.
"$K" stats -r cuda_gpu_kern_sum -r cuda_api_sum -r nvtx_sum -r cuda_gpu_mem_time_sum --format csv \
  -o "$T/x" "$LLAMA/trace.sqlite.xz" 2>"$T/err"
for r in cuda_gpu_kern_sum cuda_api_sum nvtx_sum cuda_gpu_mem_time_sum; do
  cmp "$T/x_$r.csv" <(gold "$LLAMA/gold/$r.csv") || { echo "FAIL: $r differs from nsys"; exit 1; }
done
# --filter-nvtx through the CLI.
"$K" stats -r cuda_gpu_kern_sum --format csv --filter-nvtx measure:decode_step/3 "$LLAMA/trace.sqlite.xz" >"$T/f.csv"
cmp "$T/f.csv" <(gold "$LLAMA/gold/filters/filt2/cuda_gpu_kern_sum.csv") || { echo "FAIL: filtered kern_sum differs"; exit 1; }
# The same file uncompressed is read by parallel rowid-sliced scans: every report must still
# equal nsys's output (the golden suite reads the .xz, which takes the sequential path).
xz -dc "$LLAMA/trace.sqlite.xz" >"$T/trace.sqlite"
for r in cuda_api_sum cuda_gpu_kern_sum cuda_gpu_trace cuda_api_trace cuda_kern_exec_sum nvtx_kern_sum nvtx_gpu_proj_sum cuda_api_gpu_sum; do
  "$K" stats -r $r --format csv "$T/trace.sqlite" >"$T/plain.csv" 2>/dev/null
  cmp "$T/plain.csv" <(gold "$LLAMA/gold/$r.csv") || { echo "FAIL: $r on the plain (parallel) file differs from nsys"; exit 1; }
done
# A report that lacks its data is skipped with a note, the others still run (exit 0).
"$K" stats -r osrt_sum -r cuda_gpu_kern_sum --format csv "$LLAMA/trace.sqlite.xz" >"$T/s.csv" 2>"$T/s.err"
grep -q "SKIPPED osrt_sum" "$T/s.err" || { echo "FAIL: no skip note"; exit 1; }
cmp "$T/s.csv" <(gold "$LLAMA/gold/cuda_gpu_kern_sum.csv") || { echo "FAIL: other report affected by the skip"; exit 1; }
# info names the source, devices, counts and top-level ranges (facts from the export itself).
"$K" info "$LLAMA/trace.sqlite.xz" >"$T/info.txt"
grep -q "Nsight Systems 2025.3.2.0" "$T/info.txt"
grep -q "NVIDIA H200" "$T/info.txt"
grep -Eq "kernels +90287" "$T/info.txt"
grep -Eq "cuda_api +200447" "$T/info.txt"
grep -Eq "64 x :measure:decode_step" "$T/info.txt"
grep -Eq "osrt +absent" "$T/info.txt"
"$K" info --format json "$LLAMA/trace.sqlite.xz" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['counts']['kernels'] == 90287 and d['counts']['osrt'] is None, d['counts']
assert d['devices'][0]['name'] == 'NVIDIA H200'
assert {r['name'] for r in d['top_level_nvtx_ranges']} == {':warmup:prefill', ':warmup:decode_step', ':measure:prefill', ':measure:decode_step'}
"
# A graph traced node by node: info counts the graph-node kernels (16,320 per the fixture's provenance).
"$K" info --format json "$FIX/nsys/graph_tiny_kernels_h200/trace.sqlite.xz" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['graph_node_kernels'] == 16320, d['graph_node_kernels']
"

# tail: nsys-style headers with units; a bad --by is bad input.
"$K" tail --by api --format csv "$LLAMA/trace.sqlite.xz" >"$T/tail.csv"
head -1 "$T/tail.csv" | grep -q "P50 (ns),P95 (ns),P99 (ns),Max (ns),P99/P50,Max/P50,Tail Score"
grep -q ",cudaLaunchKernel$" "$T/tail.csv"
expect_refused "bad --by" tail --by gpu "$LLAMA/trace.sqlite.xz"
echo "tail checks passed"
# ops: the scripted CSV interface.
"$K" ops --format csv "$LLAMA/trace.sqlite.xz" >"$T/ops.csv"
head -1 "$T/ops.csv" | grep -qx "Class,Time (%),Total Time (ns),Instances,Kernels"
grep -q "^gemv," "$T/ops.csv"
printf 'gemm no tab\n' >"$T/bad_rules.tsv"
expect_refused "bad rules" ops --rules "$T/bad_rules.tsv" "$LLAMA/trace.sqlite.xz"
echo "ops checks passed"
# analyze --format json: the scripted interface (rule ids are nsys's; counts are all offenders).
"$K" analyze --format json "$LLAMA/trace.sqlite.xz" | python3 -c "
import json, sys
d = json.load(sys.stdin)
rules = {f['rule']: f for f in d['findings']}
nsys_rules = {'cuda_memcpy_async', 'cuda_memcpy_sync', 'cuda_memset_sync', 'cuda_api_sync', 'gpu_gaps', 'gpu_time_util'}
assert nsys_rules <= set(rules) and all(r in nsys_rules or r.startswith('llm_') for r in rules), rules.keys()
assert rules['llm_launch_bound']['count'] == 64     # the 64 measured decode steps
assert rules['cuda_memcpy_async']['count'] == 149   # every H2D copy of the export is pageable (149 in cuda_gpu_mem_time_sum's gold)
assert rules['cuda_memcpy_sync']['count'] == 0 and rules['gpu_gaps']['count'] == 0
for f in d['findings']: assert {'severity', 'evidence', 'action'} <= set(f)
"
expect_refused "--chunks 0" analyze --chunks 0 "$LLAMA/trace.sqlite.xz"
echo "analyze checks passed"
# report: text with Diagnosis and Next actions; JSON with its schema tag.
"$K" report "$LLAMA/trace.sqlite.xz" >"$T/report.txt"
grep -q "^Diagnosis" "$T/report.txt" && grep -q "^Next actions" "$T/report.txt"
"$K" report --format json "$LLAMA/trace.sqlite.xz" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['schema'] == 'kernscope.report/1' and d['steps']['decode_wall']['count'] == 64 and d['next_actions']
"
"$K" steps --format csv "$LLAMA/trace.sqlite.xz" | head -1 | grep -q "^Step,Phase,Tokens,Start (ns),Wall (ns)"
expect_refused "unknown step range" steps --step-range nosuch "$LLAMA/trace.sqlite.xz"
echo "report/steps checks passed"
# record: the child's exit status comes back; Python children get the os._exit hook, which must
# leave a program that never starts CUDA unchanged (and chain to a shadowed sitecustomize).
mkdir -p "$T/site"
echo 'import os; os.environ["KERNSCOPE_CHAINED"] = "1"' >"$T/site/sitecustomize.py"
set +e
PYTHONPATH="$T/site" "$K" record -o "$T/r-%p.sqlite" -- python3 -c '
import os, sys
assert os.environ.get("KERNSCOPE_CHAINED") == "1", "the shadowed sitecustomize did not run"
assert os._exit.__module__ == "sitecustomize"
sys.stdout.flush(); os._exit(3)' 2>"$T/record.err"
rc=$?
set -e
if [ "$rc" -ne 3 ]; then echo "FAIL: record returned $rc, want the child's 3"; cat "$T/record.err"; exit 1; fi
echo "record checks passed"
echo "all command checks passed"
