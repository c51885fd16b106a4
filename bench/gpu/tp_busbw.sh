#!/bin/bash
# issue 15/16 on a two-GPU machine: bus bandwidth against the link's peak from a real capture.
# bench/gpu/tp_decode.py on 2 ranks under the PyTorch profiler (TORCHPROF: one Kineto trace per rank,
# record_shapes, so NCCL kernels carry record_param_comms's sizes), twice: batch 1 (8 KiB all-reduces,
# latency-bound) and batch 2048 (16 MiB all-reduces, bandwidth-bound); then `kernscope ranks` on both files
# of each run. Printed: what the program issued, an independent count/size of the NCCL kernels from the
# JSON (python json), and kernscope's collectives, sizes, algBW/busBW and the link peak it matched.
# Hand-derived: bytes_per_allreduce = HIDDEN x BATCH x 2 (bf16) = 8192 and 16777216; with 2 ranks an
# all-reduce's busBW = algBW x 2(n-1)/n = algBW.
# usage (repository root on the GPU machine, binaries under .gpu/): bench/gpu/tp_busbw.sh OUT_DIR
source "$(dirname "$0")/tracer_env.sh"
OUT=${1:?OUT_DIR}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -4
P="python3 -m torch.distributed.run --standalone --nproc_per_node 2 $R/bench/gpu/tp_decode.py"
run() {  # NAME, then environment assignments
  local name=$1; shift
  echo "== $name: $*"
  env "$@" TORCHPROF="$OUT/$name" timeout 120 $P 2>&1 | grep -E "rank=|Error|error" | head -6
  ls -la "$OUT/$name"
  python3 - "$OUT/$name" <<'PY'
import glob, gzip, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/rank*.trace.json.gz")):
    d = json.load(gzip.open(f))
    k = [e for e in d["traceEvents"] if e.get("cat") == "kernel" and e.get("name", "").startswith(("ncclKernel", "ncclDevKernel"))]
    sizes = {}
    for e in k:
        a = e.get("args", {})
        key = (a.get("Collective name"), a.get("In msg nelems"), a.get("Out msg nelems"), a.get("dtype"))
        sizes[key] = sizes.get(key, 0) + 1
    print(f"json {f.split('/')[-1]}: distributedInfo={d.get('distributedInfo')} devices={[p.get('name') for p in d.get('deviceProperties', [])]}")
    print(f"  NCCL kernels {len(k)}; (collective, in nelems, out nelems, dtype) -> count: {sizes}")
    steps = [e for e in d["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]
    print(f"  ProfilerStep ranges {len(steps)}")
PY
  $K ranks "$OUT/$name"/rank*.trace.json.gz > "$OUT/ranks_$name.txt" 2>&1
  echo "-- kernscope ranks (rc $?):"; head -40 "$OUT/ranks_$name.txt"
  echo "-- collective_kinds CSV:"; $K ranks --format csv --table collective_kinds "$OUT/$name"/rank*.trace.json.gz
}
run b1 BATCH=1
run b2048 BATCH=2048 STEPS=10 WARMUP=3 EVERY=0
