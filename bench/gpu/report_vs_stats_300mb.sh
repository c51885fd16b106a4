#!/bin/bash
# report against the four stats summaries on the GPU machine's CPUs (16 cores; the dev machine has 2):
# the two 300 MB exports of bench/RESULTS.md made again here from their sources, then
# bench/time_interleaved.py, interleaved, one warm-up round, 5 reps.
# usage: bash bench/gpu/accounting/run.sh prepare; cp /tmp/hf_nsys.sqlite .gpu/   (here; carry .gpu)
#        bash bench/gpu/report_vs_stats_300mb.sh                                      (on the GPU machine)
set -u
python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
source bench/gpu/tracer_env.sh
nproc
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz'), open('/tmp/llama_src.sqlite','wb'))"
python3 bench/make_big_export.py /tmp/llama_src.sqlite /tmp/llama_big.sqlite 0.3 >/dev/null &
python3 bench/make_big_export.py .gpu/hf_nsys.sqlite /tmp/hf_big.sqlite 0.3 >/dev/null &
wait
ls -l /tmp/llama_big.sqlite /tmp/hf_big.sqlite
STATS="-r cuda_gpu_kern_sum -r cuda_api_sum -r cuda_gpu_mem_time_sum -r nvtx_sum --format csv"
for f in /tmp/hf_big.sqlite /tmp/llama_big.sqlite; do
  echo "== $f"
  python3 bench/time_interleaved.py --reps 5 --name stats -- $K stats $STATS $f ";;" --name report -- $K report $f
done
# The same machine held to 2 of its cores (as the dev machine), for the ratio's dependence on cores.
echo "== /tmp/hf_big.sqlite on 2 cores (taskset -c 0,1)"
python3 bench/time_interleaved.py --reps 5 --name stats -- taskset -c 0,1 $K stats $STATS /tmp/hf_big.sqlite ";;" \
  --name report -- taskset -c 0,1 $K report /tmp/hf_big.sqlite
