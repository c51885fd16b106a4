#!/bin/bash
# Measures `kernscope report` against the four `kernscope stats` summaries on one export: wall time
# and peak RSS (GNU time's "Maximum resident set size"), run interleaved (stats, report, stats, …)
# after one warm-up round of each; prints medians, ranges, peak RSS as a multiple of the file's size
# and report's median time over stats' (issue 11's targets: ≤ 1.0× the file, ≤ 1.3× the time).
#
# usage: bench/report_vs_stats.sh KERNSCOPE TRACE [REPS]
#   KERNSCOPE  the kernscope binary to measure
#   TRACE      an Nsight Systems SQLite export; if it does not exist and MAKE_FROM is set, it is made
#              from MAKE_FROM (an export, .sqlite or .sqlite.gz) by bench/make_big_export.py, to
#              SIZE_GB gigabytes (default 1.05: the "1 GB export" of bench/RESULTS.md)
#   REPS       measured repetitions of each command (default 3)
# environment: TIME_BIN (GNU time, default /usr/bin/time; Python's getrusage where it is missing),
#              LOG (per-run lines, default none)
set -euo pipefail
KERNSCOPE=${1:?usage: report_vs_stats.sh KERNSCOPE TRACE [REPS]}
TRACE=${2:?usage: report_vs_stats.sh KERNSCOPE TRACE [REPS]}
REPS=${3:-3}
TIME_BIN=${TIME_BIN:-/usr/bin/time}
here=$(cd "$(dirname "$0")" && pwd)

if [[ ! -f $TRACE ]]; then
  [[ -n ${MAKE_FROM:-} ]] || { echo "error: $TRACE does not exist and MAKE_FROM is not set" >&2; exit 2; }
  src=$MAKE_FROM
  if [[ $src == *.gz || $src == *.xz ]]; then
    src=$TRACE.source.sqlite
    if [[ $MAKE_FROM == *.xz ]]; then xz -dc "$MAKE_FROM" >"$src"; else gunzip -c "$MAKE_FROM" >"$src"; fi
  fi
  python3 "$here/make_big_export.py" "$src" "$TRACE" "${SIZE_GB:-1.05}" | tail -1
  [[ $src == "$MAKE_FROM" ]] || rm -f "$src"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same four summaries and flags as the earlier figures of bench/RESULTS.md.
stats_cmd=("$KERNSCOPE" stats -r cuda_gpu_kern_sum -r cuda_api_sum -r cuda_gpu_mem_time_sum -r nvtx_sum
           --format csv -o "$work/stats" "$TRACE")
report_cmd=("$KERNSCOPE" report "$TRACE")

# Runs a command, leaving its peak RSS in $work/time.txt as GNU time -v words it; where GNU time
# is missing, Python's getrusage of the child (ru_maxrss, KiB on Linux) says the same.
peak_rss() {
  if [[ -x $TIME_BIN ]]; then
    "$TIME_BIN" -v -o "$work/time.txt" "$@"
  else
    python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(f"Maximum resident set size (kbytes): {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
sys.exit(rc)' "$work/time.txt" "$@"
  fi
}

# Runs one command under GNU time; appends "NAME SECONDS PEAK_KIB" to $work/runs.
measure() {
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  if ! peak_rss "$@" >"$work/out.txt" 2>"$work/err.txt"; then
    echo "error: $name failed: $(head -c 500 "$work/err.txt")" >&2; exit 1
  fi
  t1=$(date +%s.%N)
  local kib
  kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  echo "$name $(python3 -c "print(f'{$t1 - $t0:.3f}')") $kib" >>"$work/runs"
  [[ -z ${LOG:-} ]] || tail -1 "$work/runs" >>"$LOG"
}

echo "host: $(nproc) cores, $(uname -r), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kernscope: $KERNSCOPE ($(sha256sum "$KERNSCOPE" | cut -c1-12))"
echo "trace: $TRACE, $(stat -c %s "$TRACE") bytes; $REPS interleaved repetitions after a warm-up round"
date -u +"start: %Y-%m-%d %H:%M:%S UTC"
measure warmup-stats "${stats_cmd[@]}"
measure warmup-report "${report_cmd[@]}"
: >"$work/runs"
for ((i = 0; i < REPS; i++)); do
  measure stats "${stats_cmd[@]}"
  measure report "${report_cmd[@]}"
done
date -u +"end: %Y-%m-%d %H:%M:%S UTC"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/runs" "$(stat -c %s "$TRACE")" <<'EOF'
import statistics, sys
runs, size = sys.argv[1], int(sys.argv[2])
rows = {}
for line in open(runs):
    name, seconds, kib = line.split()
    rows.setdefault(name, []).append((float(seconds), int(kib)))
med = {n: statistics.median(s for s, _ in r) for n, r in rows.items()}
print(f"file: {size / 2**20:.1f} MiB")
print("| command | median wall | range | peak RSS (median, max) | peak RSS / file | time / stats |")
print("|---|---|---|---|---|---|")
for n in ("stats", "report"):
    t = [s for s, _ in rows[n]]
    m = [k * 1024 for _, k in rows[n]]
    print(f"| {n} | {med[n]:.3f} s | {min(t):.3f}–{max(t):.3f} | {statistics.median(m) / 2**20:.0f} MiB, "
          f"{max(m) / 2**20:.0f} MiB | {statistics.median(m) / size:.2f}× | {med[n] / med['stats']:.2f} |")
rss = statistics.median(k * 1024 for _, k in rows["report"]) / size
ratio = med["report"] / med["stats"]
print(f"report peak RSS {rss:.2f}× the file (target ≤ 1.0: {'met' if rss <= 1.0 else 'NOT met'}); "
      f"report/stats time {ratio:.2f} (target ≤ 1.3: {'met' if ratio <= 1.3 else 'NOT met'})")
EOF
