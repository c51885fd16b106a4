#!/bin/bash
# Issue 11's memory and time targets on the GPU host: `kernscope report` against the four `stats`
# summaries on a 1 GB export made there from the bundled llama trace (bench/make_big_export.py,
# the same 1,056,038,912-byte export as on the 2-core machine), measured by bench/report_vs_stats.sh
# (interleaved, one warm-up round, GNU time's peak RSS). Run from the repository root with the
# carried binary under .gpu/ (tracer_env.sh); writes the table and the per-run lines to $OUT.
#
# usage: bench/gpu/report_vs_stats.sh [REPS]   (default 5)
set -euo pipefail
source bench/gpu/tracer_env.sh
REPS=${1:-5}
OUT=${OUT:-/tmp/report_vs_stats_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$R/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${WORK:-/tmp/ks_report_vs_stats}
mkdir -p "$work"
big=$work/llama_1gb.sqlite
if [[ ! -f $big ]]; then
  xz -dc tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz >"$work/llama.sqlite"
  start=$(date +%s)
  python3 bench/make_big_export.py "$work/llama.sqlite" "$big" 1.05 | tail -1
  echo "export made in $(( $(date +%s) - start )) s"
fi
LOG=$OUT/report_vs_stats_runs.txt bench/report_vs_stats.sh "$R/.gpu/bin/kernscope" "$big" "$REPS" | tee "$OUT/report_vs_stats.txt"
