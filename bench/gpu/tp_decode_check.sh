#!/bin/bash
# issue 16 on a two-GPU machine (nvidia-h200-x2): bench/gpu/tp_decode.py on 2 ranks, plain, under
# `kernscope record` (one file per rank) and under nsys; then `kernscope ranks` on both sets.
# usage: bench/gpu/tp_decode_check.sh OUT_DIR   (repository root on the GPU machine, binaries under .gpu/)
source "$(dirname "$0")/tracer_env.sh"
OUT=${1:?OUT_DIR}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
P="python3 -m torch.distributed.run --standalone --nproc_per_node 2 $R/bench/gpu/tp_decode.py"
nvidia-smi --query-gpu=index,name --format=csv,noheader
echo "== plain"; $P 2>&1 | grep "rank="
echo "== kernscope record"; $K record -o "$OUT/tp-%p.sqlite" -- $P 2>&1 | grep -E "rank=|tp-"
T=$R/.gpu/tools; [ -f "$T/gpu-nsys-env.sh" ] || T=$R/../shared/tools
source "$T/gpu-nsys-env.sh" >/dev/null 2>&1
if [ -x "$NSYS" ]; then
  echo "== nsys"; "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o "$OUT/tp_nsys" $P 2>&1 | grep "rank="
  "$NSYS" export --type=sqlite --force-overwrite=true -o "$OUT/tp_nsys.sqlite" "$OUT/tp_nsys.nsys-rep" >/dev/null 2>&1
fi
ls -la "$OUT"
# Only the rank processes (files with kernels) are ranks; torchrun's own process has none.
ranks=$(for f in "$OUT"/tp-*.sqlite; do n=$(q "$f" "select count(*) from CUPTI_ACTIVITY_KIND_KERNEL" | tr -dc 0-9); [ "${n:-0}" -gt 0 ] && echo "$f"; done)
echo "== kernscope ranks (kernscope record files): $ranks"
$K ranks $ranks
[ -f "$OUT/tp_nsys.sqlite" ] && { echo "== kernscope ranks (nsys export)"; $K ranks "$OUT/tp_nsys.sqlite"; }
