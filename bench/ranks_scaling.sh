#!/usr/bin/env bash
# kernscope ranks over growing sets of ranks made from one real trace (tests/ranks/make_rank_set.py):
# wall time and peak RSS (GNU time) per set size. Usage:
#   bench/ranks_scaling.sh KERNSCOPE SOURCE_TRACE WORKDIR "8 16 32 64"
# The largest size is generated once (sequence numbers recorded); smaller sets are its first N ranks
# (the analysis then also reports the other ranks as missing, which costs nothing measurable).
set -euo pipefail
kernscope=$1 source=$2 work=$3 sizes=$4
here=$(cd "$(dirname "$0")" && pwd)
max=0
for n in $sizes; do (( n > max )) && max=$n; done
set_dir=$work/set$max
if [[ ! -f $set_dir.truth.json ]]; then
  python3 "$here/../tests/ranks/make_rank_set.py" "$source" "$set_dir" --ranks "$max" --seq
fi
printf '%6s %10s %12s %14s\n' ranks wall_s peak_rss_mb input_mb_gz
for n in $sizes; do
  files=()
  for ((r = 0; r < n; r++)); do files+=("$set_dir/rank$r.trace.json.gz"); done
  bytes=$(du -cb "${files[@]}" | tail -1 | cut -f1)
  /usr/bin/time -f '%e %M' -o "$work/time.$n" "$kernscope" ranks "${files[@]}" --format json > "$work/ranks.$n.json"
  read -r wall rss < "$work/time.$n"
  printf '%6s %10s %12.1f %14.1f\n' "$n" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)"
done
