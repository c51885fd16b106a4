#!/usr/bin/env bash
# A short, bounded libFuzzer run of each target, seeded with tests/fuzz/seeds. Any crash, leak,
# sanitizer report or timeout fails (libFuzzer exits non-zero and leaves the input in $out).
# A fixed seed and a fixed number of runs make the run the same on every machine (CI included);
# FUZZ_SECONDS>0 switches to a time-bounded run for longer local sessions.
set -eu
build=$1
seconds=${2:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  local target=$1 seeds=$2 max_len=$3 runs=$4
  mkdir -p "$out/$target"
  local bound=(-seed=1 -runs="$runs")
  [ "$seconds" -gt 0 ] && bound=(-max_total_time="$seconds")
  echo "fuzzing $target (${bound[*]})" >"$out/$target.summary"
  "$build/tests/fuzz/$target" "$out/$target" "$seeds" "${bound[@]}" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/$target." -print_final_stats=1 2>"$out/$target.log" || {
    tail -40 "$out/$target.log" >>"$out/$target.summary"
    echo "fuzz target $target failed; crashing input kept in ${FUZZ_ARTIFACTS:-$out}" >>"$out/$target.summary"
    [ -n "${FUZZ_ARTIFACTS:-}" ] && cp "$out/$target".crash-* "$out/$target".leak-* "$out/$target".timeout-* "$FUZZ_ARTIFACTS" 2>/dev/null
    return 1
  }
  grep -E "stat::number_of_executed_units|cov:" "$out/$target.log" | tail -2 >>"$out/$target.summary"
}
# The three targets run side by side (each is one process on one core); their summaries are printed
# in this order once all have finished, and any failure fails the run.
targets=(fuzz_filter_grammar fuzz_nsys_reader fuzz_kineto_reader)
run fuzz_filter_grammar "$root/tests/fuzz/seeds/grammar" 256 200000 & pids=($!)
run fuzz_nsys_reader "$root/tests/fuzz/seeds/nsys" 300000 600 & pids+=($!)
run fuzz_kineto_reader "$root/tests/fuzz/seeds/kineto" 65536 3000 & pids+=($!)
failed=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || failed=1
  cat "$out/${targets[$i]}.summary"
done
exit $failed
