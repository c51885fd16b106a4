#!/usr/bin/env bash
# kernscope roofline end to end: the CSV columns the issue fixes, rows from recorded shapes, the
# note for a GPU missing from the peak table, --peaks, and bad input (exit code 2, one line).
set -u
K=$1
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MI300="$FIX/kineto/tracelens__traces__mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.xz"
A100PG="$FIX/kineto/trace_diff__control__control.json.xz"  # 'NVIDIA A100-PG509-200': not in the table
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

expect_refused() {  # expect_refused NAME EXPECTED_SUBSTRING ARGS...
  local name=$1 want=$2
  shift 2
  timeout 120 "$K" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -ne 2 ]; then fail "$name: exit code $rc, want 2"; return; fi
  if [ "$(wc -l <"$T/err")" -ne 1 ]; then fail "$name: stderr is not one line:"; cat "$T/err"; return; fi
  if ! grep -qF -- "$want" "$T/err"; then fail "$name: stderr lacks '$want':"; cat "$T/err"; return; fi
  echo "ok   $name: $(cat "$T/err")"
}

"$K" roofline --format csv --limit 0 "$MI300" >"$T/mi300.csv" 2>"$T/mi300.err" || fail "roofline csv exit code $?"
[ "$(head -1 "$T/mi300.csv")" = "Name,Count,Time (ns),FLOPs,Bytes,Intensity (FLOP/B),TFLOP/s,GB/s,Roof,% of Roof,Ideal (ns),Recoverable (ns),Source" ] ||
  fail "CSV header: $(head -1 "$T/mi300.csv")"
grep -q ",compute,.*,kineto-shapes$" "$T/mi300.csv" || fail "no compute-bound row from kineto-shapes"
grep -q ",memory,.*,kineto-shapes$" "$T/mi300.csv" || fail "no memory-bound row from kineto-shapes"
# Every kernel appears: the rows' counts add up to the trace's kernels (python's json count).
rows_kernels=$(python3 -c "import csv,sys; print(sum(int(r['Count']) for r in csv.DictReader(open(sys.argv[1]))))" "$T/mi300.csv")
json_kernels=$(python3 -c "import lzma,json,sys; print(sum(e.get('cat')=='kernel' for e in json.load(lzma.open(sys.argv[1]))['traceEvents']))" "$MI300")
[ "$rows_kernels" = "$json_kernels" ] || fail "rows count $rows_kernels kernels, the JSON holds $json_kernels"

"$K" roofline "$MI300" >"$T/mi300.txt" 2>&1 || fail "roofline table exit code $?"
grep -q "peaks of MI300X" "$T/mi300.txt" || fail "table lacks the peaks line"
grep -q "work known for .* of kernel time" "$T/mi300.txt" || fail "table lacks the coverage line"
grep -q "FLOP/B" "$T/mi300.txt" || fail "table lacks the chart"
"$K" roofline --by class --format json "$MI300" | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['rows'] and d['summary'], d" ||
  fail "--by class JSON"
"$K" roofline --by step --format csv "$MI300" >/dev/null || fail "--by step exit code $?"

# A GPU missing from the table: said, roofs left empty (never zeros), --peaks supplies them.
"$K" roofline "$A100PG" >"$T/pg.txt" 2>&1 || fail "unknown GPU exit code $?"
grep -q "no peaks known for 'NVIDIA A100-PG509-200'.*--peaks FILE" "$T/pg.txt" || fail "no note for the unknown GPU: $(head -3 "$T/pg.txt")"
printf 'name\tmatch\tsm_count\tmemory_gb\tbandwidth_gbs\tfp64\tfp32\ttf32\tfp16_bf16\tfp8\tint8\tfp4\tsource\nPG509\tA100 PG509\t108\t0\t1555\t19.5\t19.5\t156\t312\t-\t624\t-\tA100 SXM4 40GB datasheet\n' >"$T/peaks.tsv"
"$K" roofline --peaks "$T/peaks.tsv" "$A100PG" >"$T/pg2.txt" 2>&1 || fail "--peaks exit code $?"
grep -q "peaks of PG509 ($T/peaks.tsv:2)" "$T/pg2.txt" || fail "--peaks row not used: $(head -2 "$T/pg2.txt")"

expect_refused "bad --by" "--by must be kernel, class or step" roofline --by op "$MI300"
expect_refused "missing --peaks file" "cannot read --peaks file" roofline --peaks "$T/nope.tsv" "$MI300"
printf 'name\tmatch\n' >"$T/bad.tsv"
expect_refused "bad --peaks file" "bad.tsv:1: expected the header line" roofline --peaks "$T/bad.tsv" "$MI300"
expect_refused "bad --latency-floor" "latency-floor" roofline --latency-floor fast "$MI300"
expect_refused "negative --limit" "--limit must be 0 or more" roofline --limit -1 "$MI300"

if [ "$failures" -ne 0 ]; then echo "$failures roofline CLI checks failed"; exit 1; fi
echo "roofline CLI checks passed"
