#!/bin/bash
# Tracer cost per kernel on launch-bound work, by what is recorded, interleaved rounds:
# launch_cost (C++ empty kernels, eager and graph) and a PyTorch loop of tiny in-place adds.
# Prints one line per run: variant workload ns_per_kernel (median of the run's repetitions).
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
cat > /tmp/torch_loop.py <<'PY'
import time, torch
x = torch.zeros(1, device="cuda")
per = []
for r in range(6):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for i in range(20000): x.add_(1)
    torch.cuda.synchronize(); t1 = time.perf_counter()
    if r: per.append((t1 - t0) / 20000 * 1e9)
per.sort()
print(f"torch ns_per_kernel={per[len(per)//2]:.1f} min={per[0]:.1f} max={per[-1]:.1f}")
PY
run() {  # variant command...
  local v=$1; shift
  for w in "eager 50000 7" "graph 128000 7"; do
    echo "$v $(timeout 120 "$@" /tmp/launch_cost $w 2>/dev/null | grep ns_per_kernel)"
  done
  echo "$v $(timeout 120 "$@" python3 /tmp/torch_loop.py 2>/dev/null | grep ns_per_kernel)"
}
REC="$K record --nvml-interval 0 -o /tmp/lc.sqlite --"
for round in 1 2 3; do
  run none env
  run attach $K record --nvml-interval 0 --record overhead -o /tmp/lc.sqlite --
  run kernel $K record --nvml-interval 0 --record kernel -o /tmp/lc.sqlite --
  run runtime $K record --nvml-interval 0 --record runtime -o /tmp/lc.sqlite --
  run kernel+runtime $K record --nvml-interval 0 --record kernel,runtime -o /tmp/lc.sqlite --
  run all $REC
  run all_flush0 env KERNSCOPE_FLUSH_MS=0 $REC
  run nsys "$NSYS" profile --trace=cuda --cuda-graph-trace=node --force-overwrite=true -o /tmp/lc_nsys
  run nsys_graphlevel "$NSYS" profile --trace=cuda --cuda-graph-trace=graph --force-overwrite=true -o /tmp/lc_nsysg
done
echo "== nsys --cuda-graph-trace=graph: tables"
"$NSYS" profile --trace=cuda --cuda-graph-trace=graph --force-overwrite=true -o /tmp/gl /tmp/launch_cost graph 3200 1 >/dev/null 2>&1
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/gl.sqlite /tmp/gl.nsys-rep >/dev/null 2>&1
python3 - <<'PY'
import sqlite3
c = sqlite3.connect("/tmp/gl.sqlite")
for (name, sql) in c.execute("select name, sql from sqlite_master where type='table'"):
    n = c.execute(f"select count(*) from [{name}]").fetchone()[0]
    if "GRAPH" in name or "KERNEL" in name or "RUNTIME" in name:
        print(sql); print("rows", n)
        for row in c.execute(f"select * from [{name}] limit 3"): print("  ", row)
PY
$K stats -r cuda_gpu_kern_sum,cuda_api_sum /tmp/gl.sqlite 2>&1 | head -30
cp /tmp/gl.sqlite $OUT/ 2>/dev/null
