#!/bin/bash
# report against the four stats summaries on the GPU machine's CPUs, with report's own phases:
# KERNSCOPE_PHASE_TIMES=1 prints the wall of the reading and of the analyses with their output, so
# builds are compared on the analyses apart from the reading's spread. Interleaved, REPS rounds (7),
# on the two 300 MB exports of bench/RESULTS.md made here, on all cores and held to 2 (taskset).
# usage: bash bench/gpu/accounting/run.sh prepare     (here: the build to measure, in .gpu/pack.tar.xz)
#        optionally builds to compare with it: stripped binaries in .gpu/v/NAME, packed as .gpu/v.tar.xz
#        bash bench/gpu/report_phases.sh               (on the GPU machine, carry .gpu)
# prints each build's stages (KERNSCOPE_PHASE_TIMES' stage lines), then one line a run:
#   R EXPORT CORES COMMAND ROUND WALL_S PEAK_KB READ_S ANALYSIS_S
set -u
python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
[ -f .gpu/v.tar.xz ] && python3 -c "import tarfile; tarfile.open('.gpu/v.tar.xz').extractall('.gpu')"
source bench/gpu/tracer_env.sh
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nproc
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('tests/fixtures/hf_generate/dense_bs1_nsys.nsys.sqlite.xz'), open('/tmp/hf_src.sqlite','wb'))"
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz'), open('/tmp/llama_src.sqlite','wb'))"
python3 bench/make_big_export.py /tmp/hf_src.sqlite /tmp/hf_big.sqlite 0.3 >/dev/null &
python3 bench/make_big_export.py /tmp/llama_src.sqlite /tmp/llama_big.sqlite 0.3 >/dev/null &
wait
ls -l /tmp/hf_big.sqlite /tmp/llama_big.sqlite
BUILDS=".gpu/bin/kernscope $(ls .gpu/v/* 2>/dev/null)"
STATS="-r cuda_gpu_kern_sum -r cuda_api_sum -r cuda_gpu_mem_time_sum -r nvtx_sum --format csv"
export KERNSCOPE_PHASE_TIMES=1
one() {  # label, then the command
  local label=$1 out
  shift
  out=$({ /usr/bin/time -f "TIME %e %M" "$@" >/dev/null; } 2>&1)
  echo "R $label $(echo "$out" | awk '/^TIME/{print $2, $3}') $(echo "$out" | awk '/phase times/{print $5, $10}')"
}
# Each build's stages once per export and core count first (the stage clock: every analysis's end,
# the resident set and its peak), then the interleaved rounds. ARENAS="1 2" adds rounds of the
# first build under MALLOC_ARENA_MAX=N (glibc's arenas keep freed memory: report's peak RSS).
for f in hf llama; do
  for cores in all 2; do
    pin=""
    [ $cores = 2 ] && pin="taskset -c 0,1"
    for b in $BUILDS; do
      echo "== stages: $f $cores $(basename $b)"
      $pin $b report -q /tmp/${f}_big.sqlite 2>&1 >/dev/null | grep -E "kernscope: (stage|phase)"
    done
  done
done
FIRST=${BUILDS%% *}
for f in hf llama; do
  for cores in all 2; do
    pin=""
    [ $cores = 2 ] && pin="taskset -c 0,1"
    for round in $(seq ${REPS:-7}); do
      one "$f $cores stats $round" $pin .gpu/bin/kernscope stats $STATS /tmp/${f}_big.sqlite
      for b in $BUILDS; do one "$f $cores $(basename $b) $round" $pin $b report -q /tmp/${f}_big.sqlite; done
      for n in ${ARENAS:-}; do one "$f $cores arena$n $round" $pin env MALLOC_ARENA_MAX=$n $FIRST report -q /tmp/${f}_big.sqlite; done
    done
  done
done
