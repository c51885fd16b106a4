#!/usr/bin/env bash
# The GPU-host part of the gold (issue 17) in one device call:
#   1. records the gaps_memset_sync fixture (gold_record_gaps_memset.sh);
#   2. collects the gold of every fixture with gold_collect.sh into a scratch folder;
#   3. compares it with the gold already in the repository: gold_collect.sh must reproduce every file
#      made before it byte for byte (inside analyze.txt, the analysed file's name aside);
#   4. leaves in $OUT: gold.tgz.aa, .ab ... (the parts of one tar of the new and changed files, paths
#      under tests/fixtures/nsys; cat the parts and unpack there),
#      gold_removed.txt (files the new gold no longer has: delete them), gold_logs.tgz (nsys's messages),
#      nsys_rules.tgz (nsys's report and rule scripts, to read their conditions), gold_summary.txt.
# On the development machine, first: mkdir -p .gpu && cp -r /work/shared/tools .gpu/
# then: run(command="bash bench/gpu/gold_device_run.sh", carry=[".gpu"], timeout_s=600).
# Afterwards, here: cat gold.tgz.* | tar xz -C tests/fixtures/nsys; (cd tests/fixtures/nsys && xargs -r rm -f < gold_removed.txt);
# drop the collected fixtures' "awaiting" lines from tests/golden/gold_skips.txt; run the golden tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fixtures=$repo/tests/fixtures/nsys
out=${OUT:-/tmp/gold_out}
mkdir -p "$out"
source "$here/gold_nsys_env.sh"
summary=$out/gold_summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$NSYS" --version)"
# nsys's report and rule scripts, beside its binary.
nsys_dir=$(dirname "$(readlink -f "$NSYS")")
tar czf "$out/nsys_rules.tgz" -C "$nsys_dir" reports rules 2>/dev/null || say "no reports/rules beside $NSYS"

say "== 1. recording gaps_memset_sync"
start=$SECONDS
if timeout 120 bash "$here/gold_record_gaps_memset.sh" >> "$summary" 2>&1; then
  say "recorded in $((SECONDS - start)) s"
else
  say "FAILED to record gaps_memset_sync (log above); collecting the other fixtures"
fi

say "== 2. collecting gold"
# Small exports first, in one pass, so that their gold comes back even if the big ones run out of time.
scratch=$(mktemp -d)
small=(); big=()
for t in "$fixtures"/*/trace.sqlite.xz; do
  f=$(basename "$(dirname "$t")")
  if [ "$(stat -c %s "$t")" -le $((5 * 1024 * 1024)) ]; then small+=("$f"); else big+=("$f"); fi
done
for pass in small big; do
  if [ $pass = small ]; then group=("${small[@]}"); else group=("${big[@]}"); fi
  [ ${#group[@]} -gt 0 ] || continue
  start=$SECONDS
  timeout "${GOLD_PASS_TIMEOUT:-240}" bash "$here/gold_collect.sh" --dest "$scratch" --logs "$scratch/logs" "${group[@]}" 2>&1 | tee -a "$summary"
  say "$pass exports (${group[*]}): collected in $((SECONDS - start)) s"
done

say "== 3. the gold already here, reproduced?"
# Inside analyze.txt nsys names the file it analysed; the first gold used other names for the copies.
normalize() { case $1 in */analyze.txt) sed -E 's/^(Processing |SKIPPED: )\[?[^] ]*\]?/\1<file>/' "$1" ;; *.gz) gunzip -c "$1" ;; *.xz) xz -dc "$1" ;; *) cat "$1" ;; esac; }
same=0; differ=0; gone=0
: > "$out/gold_removed.txt"
list=$scratch/changed.txt
: > "$list"
for old_gold in "$fixtures"/*/gold; do
  f=$(basename "$(dirname "$old_gold")")
  [ -d "$scratch/$f/gold" ] || continue
  while IFS= read -r rel; do
    new=$scratch/$f/gold/$rel
    if [ ! -f "$new" ]; then
      gone=$((gone + 1)); echo "$f/gold/$rel" >> "$out/gold_removed.txt"; say "  not made again: $f/gold/$rel"
    elif cmp -s <(normalize "$old_gold/$rel") <(normalize "$new"); then
      same=$((same + 1))
    else
      differ=$((differ + 1)); say "  differs: $f/gold/$rel"
    fi
  done < <(cd "$old_gold" && find . -type f ! -name MANIFEST.txt | sed 's|^\./||' | sort)
done
say "existing gold files: $same reproduced, $differ differ, $gone not made again"

say "== 4. packing"
# Only what is new or whose content changed travels back (a .gz made again differs in its header only).
for new_gold in "$scratch"/*/gold; do
  f=$(basename "$(dirname "$new_gold")")
  while IFS= read -r rel; do
    old=$fixtures/$f/gold/$rel
    [ -f "$old" ] && [ "$rel" != MANIFEST.txt ] && cmp -s <(xz -dcf "$old" 2>/dev/null || gunzip -c -f "$old") <(xz -dcf "$new_gold/$rel") && continue
    echo "$f/gold/$rel" >> "$list"
  done < <(cd "$new_gold" && find . -type f | sed 's|^\./||' | sort)
done
[ -f "$fixtures/gaps_memset_sync/trace.sqlite.xz" ] && echo "gaps_memset_sync/trace.sqlite.xz" >> "$list"
cp "$fixtures/gaps_memset_sync/trace.sqlite.xz" "$scratch/gaps_memset_sync/" 2>/dev/null
# Files come back at most 16 MB each: gold.tgz is cut into gold.tgz.aa, .ab ... (cat them to unpack).
tar czf "$scratch/gold.tgz" -C "$scratch" -T "$list"
split -b 15M "$scratch/gold.tgz" "$out/gold.tgz."
tar czf "$out/gold_logs.tgz" -C "$scratch" logs
say "$(wc -l < "$list") new or changed files, gold.tgz $(stat -c %s "$scratch/gold.tgz") bytes in $(ls "$out"/gold.tgz.* | wc -l) parts"
for f in "$scratch"/*/gold/MANIFEST.txt; do
  say "$(basename "$(dirname "$(dirname "$f")")"): $(grep -c '^gold ' "$f") gold files, $(grep -c '^left-out ' "$f") left out"
done
ls -l "$out"
