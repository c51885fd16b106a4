#!/usr/bin/env bash
# `make fuzz`: each libFuzzer target for a given time on its kept corpus, then the corpus merged
# back, minimized (libFuzzer's -merge=1 keeps one input per new coverage feature), and the run's
# executions appended to bench/fuzz-log.tsv, so totals add up over sessions.
#
#   scripts/fuzz.sh BUILD SECONDS [TARGET...]     (default: every target)
#
# The corpus of a target is tests/fuzz/corpus/TARGET.tar.xz: SQLite images and JSON traces are
# large but alike, so xz keeps a few dozen of them in tens of KB. A run starts from it plus
# tests/fuzz/seeds. A crash, leak, timeout or sanitizer report leaves the input in
# tests/fuzz/crashes/TARGET/ (fix the bug, then move the input into the corpus) and makes the
# script exit 1 after the other targets ran. FUZZ_NICE (default 19) is the niceness.
set -eu
build=$1
seconds=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_filter_grammar fuzz_nsys_reader fuzz_kineto_reader)
log="$root/bench/fuzz-log.tsv"
[ -f "$log" ] || printf 'date_utc\ttarget\tseconds\texecutions\texec_per_s\tcorpus_inputs\tcorpus_xz_bytes\tresult\tmachine\n' >"$log"
machine="$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at start"

# Per target: seeds and the longest input. The nsys seeds are SQLite images of 36-70 KB with
# 512/1024-byte pages; kineto's largest seed is 60,000 bytes.
seeds_of() { case $1 in fuzz_filter_grammar) echo grammar ;; fuzz_nsys_reader) echo nsys ;; fuzz_kineto_reader) echo kineto ;; esac; }
max_len_of() { case $1 in fuzz_filter_grammar) echo 256 ;; fuzz_nsys_reader) echo 72000 ;; fuzz_kineto_reader) echo 65536 ;; esac; }

failed=0
for target in "${targets[@]}"; do
  bin="$build/tests/fuzz/$target"
  [ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz-build)" >&2; exit 2; }
  seeds="$root/tests/fuzz/seeds/$(seeds_of "$target")"
  max_len=$(max_len_of "$target")
  corpus="$root/tests/fuzz/corpus/$target.tar.xz"
  work=$(mktemp -d)
  mkdir -p "$work/corpus" "$work/merged"
  [ -f "$corpus" ] && tar -xJf "$corpus" -C "$work/corpus"
  echo "fuzzing $target for $seconds s from $(ls "$work/corpus" | wc -l) corpus inputs"
  result=ok
  start=$(date +%s)
  nice -n "${FUZZ_NICE:-19}" "$bin" "$work/corpus" "$seeds" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/" -print_final_stats=1 >"$work/log" 2>&1 || result=crash
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  execs=${execs:-0}
  if [ "$result" = crash ]; then
    tail -40 "$work/log"
    mkdir -p "$root/tests/fuzz/crashes/$target"
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$root/tests/fuzz/crashes/$target/" 2>/dev/null || true
    echo "fuzz: $target failed; its input is in tests/fuzz/crashes/$target/" >&2
    failed=1
  fi
  # Minimize: the merged set covers every feature the old corpus, the seeds and the new inputs reach.
  nice -n "${FUZZ_NICE:-19}" "$bin" -merge=1 -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    "$work/merged" "$work/corpus" "$seeds" >"$work/merge.log" 2>&1 || { tail -20 "$work/merge.log"; failed=1; }
  if [ "$(ls "$work/merged" | wc -l)" -gt 0 ]; then
    mkdir -p "$root/tests/fuzz/corpus"
    (cd "$work/merged" && ls | LC_ALL=C sort | tar --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - -T - | xz -9e >"$corpus.new")
    mv "$corpus.new" "$corpus"
  fi
  inputs=$(ls "$work/merged" | wc -l)
  rate=$(awk -v e="$execs" -v s="$elapsed" 'BEGIN { printf "%.1f", (s > 0 ? e / s : 0) }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)" "$target" "$elapsed" "$execs" "$rate" \
    "$inputs" "$(stat -c %s "$corpus" 2>/dev/null || echo 0)" "$result" "$machine" >>"$log"
  echo "$target: $execs executions in $elapsed s ($rate/s), corpus $inputs inputs, $result"
  rm -rf "$work"
done

echo "cumulative executions (bench/fuzz-log.tsv):"
awk -F'\t' 'NR > 1 { n[$2] += $4; s[$2] += $3 } END { for (t in n) printf "  %-22s %12d in %d s\n", t, n[t], s[t] }' "$log"
exit $failed
