#!/usr/bin/env bash
# Runs on the GPU host: regenerates EVERY gold file of the named Nsight Systems fixtures with the nsys
# found there (2025.3.1, inside Nsight Compute), in the layout tests/golden/*.cpp and
# tests/cli/golden_cli_test.py discover:
#   gold/<report>.csv                      nsys stats --format csv (ns); :base/:mangled -> _base/_mangled
#   gold/variants/us_|ms_|sec_<report>.csv  --timeunit usec|msec|sec
#   gold/variants/tsv_<report>.tsv          --format tsv
#   gold/variants/json_<report>.json        --format json
#   gold/variants/col_<report>.txt          --format column (nsys's console table)
#   gold/filters/<case>/args.txt, <report>.csv   the cases of gold_filters.sh (csv, ns)
#   gold/analyze.txt                        nsys analyze (console)
#   gold/analyze/<rule>.json                nsys analyze --format json
#   gold/MANIFEST.txt                       every file made, and every file left out and why
# A report nsys printed nothing for gets an empty file. Files over 4 kB are xz-compressed (-9,
# one thread: the same bytes every time). Any other file than the 14 plain ns CSVs that is still over GOLD_MAX_KB
# (default 256) once compressed is left out (listed in MANIFEST.txt) to keep the repository small:
# the formats and units are the same code on a big table as on a small one, and the big tables here
# (the llama export's two trace reports, the nsys-ai windows' thousands of NVTX names) would add about
# 10 MB more. The same reports stay covered in every variant on the smaller fixtures.
#
# Usage: bench/gpu/gold_collect.sh [--dest DIR] [--logs LOGS] [--jobs N] FIXTURE... | --all
#   DIR defaults to tests/fixtures/nsys (the gold is replaced in place); FIXTURE names a folder there
#   holding trace.sqlite.xz. LOGS defaults to /tmp/gold_logs. nsys runs are independent and run N at
#   a time (default: GOLD_JOBS, else all CPUs).
#   NSYS: see gold_nsys_env.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fixtures=$repo/tests/fixtures/nsys

usage() { echo "usage: $0 [--dest DIR] [--logs LOGS] [--jobs N] FIXTURE... | --all" >&2; exit 2; }
dest=$fixtures
logs_root=${TMPDIR:-/tmp}/gold_logs
jobs=${GOLD_JOBS:-$(nproc)}
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --dest) [ $# -ge 2 ] || usage; dest=$2; shift 2 ;;
    --logs) [ $# -ge 2 ] || usage; logs_root=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --all) for d in "$fixtures"/*/trace.sqlite.xz; do names+=("$(basename "$(dirname "$d")")"); done; shift ;;
    -*) usage ;;
    *) names+=("$1"); shift ;;
  esac
done
[ ${#names[@]} -gt 0 ] || usage
for f in "${names[@]}"; do
  [ -f "$fixtures/$f/trace.sqlite.xz" ] || { echo "gold: no $fixtures/$f/trace.sqlite.xz" >&2; exit 2; }
done
source "$here/gold_nsys_env.sh"
source "$here/gold_filters.sh"
max_kb=${GOLD_MAX_KB:-256}

# Every report kernscope implements (src/analyses/nsys/report_registry.cpp; the golden coverage test fails
# when one is missing here). The kernel-name variants run in invocations of their own, so that an
# argument nsys rejects cannot take the plain reports down with it.
REPORTS=(cuda_api_gpu_sum cuda_api_sum cuda_api_trace cuda_gpu_kern_sum cuda_gpu_mem_size_sum
         cuda_gpu_mem_time_sum cuda_gpu_trace cuda_kern_exec_sum nvtx_gpu_proj_sum nvtx_kern_sum
         nvtx_pushpop_sum nvtx_startend_sum nvtx_sum osrt_sum)
NAME_VARIANT_REPORTS=(cuda_api_gpu_sum cuda_gpu_kern_sum cuda_gpu_trace cuda_kern_exec_sum nvtx_kern_sum)
# variant label -> nsys options; the label is the gold file's prefix.
declare -A VARIANT_ARGS=([us]="--format csv --timeunit usec" [ms]="--format csv --timeunit msec"
                         [sec]="--format csv --timeunit sec" [tsv]="--format tsv" [json]="--format json"
                         [col]="--format column")
declare -A VARIANT_EXT=([us]=csv [ms]=csv [sec]=csv [tsv]=tsv [json]=json [col]=txt)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/jobs"

# A job: one nsys invocation in a folder of its own, on a copy of the export named FIXTURE.sqlite
# (nsys analyze prints that name). Writes out/ (nsys's files), log.txt and rc.
add_job() {  # FIXTURE LABEL nsys-args...
  local fixture=$1 label=$2; shift 2
  local dir=$work/run/$fixture/$label
  mkdir -p "$dir/out"
  {
    echo "set -u; cd $(printf %q "$dir")"
    echo "cp $(printf %q "$work/$fixture.sqlite") $(printf %q "$fixture.sqlite")"
    printf 'PYTHONUNBUFFERED=1 %q' "$NSYS"
    printf ' %q' "$@"
    echo " > log.txt 2>&1; echo \$? > rc; rm -f $(printf %q "$fixture.sqlite")"
  } > "$work/jobs/$fixture.$label.sh"
}

stats_reports() { local r a=(); for r in "$@"; do a+=(--report "$r"); done; printf '%s\n' "${a[@]}"; }

for f in "${names[@]}"; do
  xz -dc "$fixtures/$f/trace.sqlite.xz" > "$work/$f.sqlite"
  mapfile -t plain < <(stats_reports "${REPORTS[@]}")
  add_job "$f" plain stats "${plain[@]}" --format csv --force-overwrite=true --output out/x "$f.sqlite"
  for v in base mangled; do
    mapfile -t named < <(stats_reports "${NAME_VARIANT_REPORTS[@]/%/:$v}")
    add_job "$f" "name_$v" stats "${named[@]}" --format csv --force-overwrite=true --output out/x "$f.sqlite"
  done
  for v in "${!VARIANT_ARGS[@]}"; do
    # shellcheck disable=SC2206
    vargs=(${VARIANT_ARGS[$v]})
    add_job "$f" "variant_$v" stats "${plain[@]}" "${vargs[@]}" --force-overwrite=true --output out/x "$f.sqlite"
  done
  while read -r fx fcase flag value; do
    [ "$fx" = "$f" ] || continue
    add_job "$f" "filter_$fcase" stats "${plain[@]}" --format csv "$flag" "$value" --force-overwrite=true --output out/x "$f.sqlite"
    printf '%s %s\n' "$flag" "$value" > "$work/run/$f/filter_$fcase/args.txt"
  done < <(gold_filter_cases)
  add_job "$f" analyze analyze "$f.sqlite"
  add_job "$f" analyze_json analyze --format json --force-overwrite=true --output out/x "$f.sqlite"
done

echo "gold: $(ls "$work/jobs" | wc -l) nsys runs, $jobs at a time, with $("$NSYS" --version)"
ls "$work/jobs"/*.sh | xargs -P "$jobs" -n 1 bash

# Stores SRC as gold file DIR/NAME (compressed when over 100 kB); CAPPED=1: left out when still over
# the cap. Appends to the manifest either way. An absent SRC is an empty gold file.
manifest=
store() {  # SRC DIR NAME CAPPED
  local src=$1 dir=$2 name=$3 capped=$4 rel
  mkdir -p "$dir"
  rel=${dir#"$gold"}; rel=${rel#/}; rel=${rel:+$rel/}$name
  if [ ! -f "$src" ]; then : > "$dir/$name"; echo "gold $rel" >> "$manifest"; return; fi
  if [ "$(stat -c %s "$src")" -le 4096 ]; then
    cp "$src" "$dir/$name"; echo "gold $rel" >> "$manifest"; return
  fi
  xz -9 -T1 -c "$src" > "$dir/$name.xz"
  local size; size=$(stat -c %s "$dir/$name.xz")
  if [ "$capped" = 1 ] && [ "$size" -gt $((max_kb * 1024)) ]; then
    rm "$dir/$name.xz"
    echo "left-out $rel.xz $size bytes compressed, over GOLD_MAX_KB=$max_kb" >> "$manifest"
    return
  fi
  echo "gold $rel.xz" >> "$manifest"
}

# nsys's file for a report: PREFIX_<report>.<ext>, ':' spelled '_' (both spellings are looked for);
# under a filter nsys appends it: PREFIX_<report>_start=A_end=B.<ext>, PREFIX_<report>_nvtx=R.<ext>.
nsys_file() {  # OUTDIR REPORT EXT
  local stem=${2//:/_} p
  for p in "$1/x_$stem.$3" "$1/x_$2.$3" "$1/x_${stem}"_*=*."$3"; do [ -f "$p" ] && { echo "$p"; return; }; done
  echo "$1/absent"
}

status=0
for f in "${names[@]}"; do
  run=$work/run/$f
  gold=$dest/$f/gold
  logs=$logs_root/$f
  rm -rf "$gold" "$logs"
  mkdir -p "$gold" "$logs"
  manifest=$gold/MANIFEST.txt
  {
    echo "# nsys gold collected by bench/gpu/gold_collect.sh; one line per file: gold PATH | left-out PATH WHY"
    echo "# $("$NSYS" --version) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'an unknown GPU'), $(date -u +%F)"
  } > "$manifest"
  for r in "${REPORTS[@]}"; do store "$(nsys_file "$run/plain/out" "$r" csv)" "$gold" "$r.csv" 0; done
  for v in base mangled; do
    for r in "${NAME_VARIANT_REPORTS[@]}"; do
      store "$(nsys_file "$run/name_$v/out" "$r:$v" csv)" "$gold" "${r}_$v.csv" 1
    done
  done
  for v in $(printf '%s\n' "${!VARIANT_ARGS[@]}" | sort); do
    for r in "${REPORTS[@]}"; do
      store "$(nsys_file "$run/variant_$v/out" "$r" "${VARIANT_EXT[$v]}")" "$gold/variants" "${v}_$r.${VARIANT_EXT[$v]}" 1
    done
  done
  for dir in "$run"/filter_*; do
    [ -d "$dir" ] || continue
    fcase=${dir##*/filter_}
    mkdir -p "$gold/filters/$fcase"
    cp "$dir/args.txt" "$gold/filters/$fcase/args.txt"
    echo "gold filters/$fcase/args.txt" >> "$manifest"
    for r in "${REPORTS[@]}"; do store "$(nsys_file "$dir/out" "$r" csv)" "$gold/filters/$fcase" "$r.csv" 1; done
  done
  store "$run/analyze/log.txt" "$gold" analyze.txt 0
  for j in "$run"/analyze_json/out/x_*.json; do
    [ -f "$j" ] || continue
    rule=${j##*/x_}
    store "$j" "$gold/analyze" "$rule" 1
  done
  # nsys's messages, exit codes, and any file of a name this script did not expect (a sign that nsys
  # spells a report's file differently: look before trusting the empty gold file made for it).
  for dir in "$run"/*/; do
    label=$(basename "$dir")
    { echo "rc=$(cat "$dir/rc")"; cat "$dir/log.txt"; } > "$logs/$label.txt"
    [ "$(cat "$dir/rc")" = 0 ] || echo "gold: $f $label: nsys exited $(cat "$dir/rc") (see $logs/$label.txt)"
  done
  for out in "$run"/*/out/*; do
    [ -e "$out" ] || continue
    name=${out##*/x_}; name=${name%.*}
    [[ $name == *=* ]] && name=$(sed -E 's/_(start|nvtx)=.*//' <<< "$name")
    case " ${REPORTS[*]} ${NAME_VARIANT_REPORTS[*]/%/_base} ${NAME_VARIANT_REPORTS[*]/%/_mangled} " in
      *" $name "*) ;;
      *) [[ $out == */analyze_json/* ]] || { echo "gold: $f: unexpected nsys file $out" | tee -a "$logs/unexpected.txt"; status=1; } ;;
    esac
  done
  echo "gold: $f: $(grep -c '^gold ' "$manifest") files, $(grep -c '^left-out ' "$manifest" || true) left out"
done
exit $status
