#!/bin/bash
# issue 16: the tracer's cost per rank, whole program, on two GPUs: bench/gpu/tp_decode.py on 2 ranks
# (torchrun) with no profiler, under `kernscope record` (defaults, one file per rank) and under nsys
# (--trace=cuda,nvtx), interleaved rounds (the order rotated each round). Each run prints every rank's
# TPOT (ms, the program's own clock over its timed steps); the per-rank overhead is the same-round ratio.
# usage (repository root on the two-GPU machine, binaries under .gpu/): bench/gpu/tp_cost.sh [ROUNDS]
#   env: STEPS (tp_decode.py's timed steps, default 40); BATCH (default 1)
source "$(dirname "$0")/tracer_env.sh"
ROUNDS=${1:-5}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
T=$R/.gpu/tools; [ -f "$T/gpu-nsys-env.sh" ] || T=$R/../shared/tools
source "$T/gpu-nsys-env.sh" >/dev/null 2>&1
P="python3 -m torch.distributed.run --standalone --nproc_per_node 2 $R/bench/gpu/tp_decode.py"
W=/tmp/tp_cost; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
one() {  # VARIANT: prints "rank=R TPOT_ms=X" per rank
  case $1 in
    none) timeout 150 $P ;;
    kernscope) timeout 150 $K record -o "$W/ks-%p.sqlite" -- $P ;;
    nsys) timeout 200 "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o "$W/nsys" $P ;;
  esac 2>&1 | grep -o "rank=[0-9]* .*TPOT_ms=[0-9.]*" | sed -E 's/^(rank=[0-9]+).*(TPOT_ms=[0-9.]+)/\1 \2/' | sort | tr '\n' ' '
}
variants=(none kernscope nsys)
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1 2; do
    v=${variants[$(( (i + r - 1) % 3 ))]}
    start=$(date +%s)
    echo "round $r $v: $(one $v)($(( $(date +%s) - start )) s)"
  done
done
