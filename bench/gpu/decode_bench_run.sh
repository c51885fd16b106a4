#!/bin/bash
# decode_bench on the GPU: correctness of the workload, tracer fidelity vs nsys, overhead (interleaved).
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvcc -O2 -std=c++17 -arch=sm_90 $R/.gpu/decode_bench.cu -lcublas -o /tmp/db || exit 1
A="--iters 3 --warmup 1"
for i in 1 2 3; do
  for g in on off; do
    echo "none graph=$g $(timeout 100 /tmp/db $A --cuda-graph $g | tail -1)"
    echo "kernscope graph=$g $(timeout 100 $K record -o /tmp/db_$g.sqlite -- /tmp/db $A --cuda-graph $g 2>/dev/null | tail -1)"
    echo "nsys graph=$g $(timeout 150 "$NSYS" profile --trace=cuda,nvtx --cuda-graph-trace=node --force-overwrite=true -o /tmp/db_nsys_$g /tmp/db $A --cuda-graph $g 2>/dev/null | grep TPOT)"
  done
done
/tmp/db $A | head -1
for g in on off; do
  timeout 100 "$NSYS" export --type sqlite --force-overwrite=true -o /tmp/db_nsys_$g.sqlite /tmp/db_nsys_$g.nsys-rep >/dev/null 2>&1
  $K stats -r cuda_gpu_kern_sum:mangled -f csv /tmp/db_$g.sqlite > /tmp/ks_$g.csv
  $K stats -r cuda_gpu_kern_sum:mangled -f csv /tmp/db_nsys_$g.sqlite > /tmp/ns_$g.csv
  $K stats -r nvtx_sum -f csv /tmp/db_$g.sqlite | head -5
  $K stats -r nvtx_sum -f csv /tmp/db_nsys_$g.sqlite | head -5
done
python3 - <<'PY'
import csv
for g in ("on", "off"):
    ks = {r["Name"]: r for r in csv.DictReader(open(f"/tmp/ks_{g}.csv"))}
    ns = {r["Name"]: r for r in csv.DictReader(open(f"/tmp/ns_{g}.csv"))}
    same = [n for n in ks if n in ns and ks[n]["Instances"] == ns[n]["Instances"]]
    dev = sorted((abs(float(ks[n]["Avg (ns)"]) / float(ns[n]["Avg (ns)"]) - 1), n[:40]) for n in ks if n in ns)
    print(f"graph={g}: names kernscope {len(ks)} nsys {len(ns)} equal counts {len(same)}; kernels {sum(int(r['Instances']) for r in ks.values())} vs {sum(int(r['Instances']) for r in ns.values())}; "
          f"mean dev median {dev[len(dev)//2][0]*100:.2f} % max {dev[-1][0]*100:.2f} % ({dev[-1][1]})")
PY
$K report /tmp/db_on.sqlite | head -25
