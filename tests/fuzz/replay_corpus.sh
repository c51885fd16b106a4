#!/usr/bin/env bash
# Replays the fuzz seeds and the kept corpus (tests/fuzz/corpus/*.tar.xz) through the replay builds
# of the fuzz targets (tests/fuzz/replay_main.cpp). usage: replay_corpus.sh BUILD_TESTS_FOLDER
set -euo pipefail
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
replay() {
  local target=$1 seeds=$2
  mkdir -p "$work/$target"
  tar -xJf "$root/tests/fuzz/corpus/$target.tar.xz" -C "$work/$target"
  local kept
  kept=$(find "$work/$target" -type f | wc -l)
  [ "$kept" -gt 0 ] || { echo "FAIL: the kept corpus of $target is empty"; return 1; }
  "$bin/replay_$target" "$seeds" "$work/$target"  # a hang fails by ctest's timeout
}
replay fuzz_filter_grammar "$root/tests/fuzz/seeds/grammar"
replay fuzz_nsys_reader "$root/tests/fuzz/seeds/nsys"
replay fuzz_kineto_reader "$root/tests/fuzz/seeds/kineto"
