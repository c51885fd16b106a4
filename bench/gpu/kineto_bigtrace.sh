#!/bin/bash
# Makes a large PyTorch-profiler trace of the Llama decode workload (prompt 512, GEN decode steps)
# and returns it gzip'd in parts under $OUT.
#
# usage: bench/gpu/kineto_bigtrace.sh [GEN]   (400; the GEN environment variable works too)
GEN=${1:-${GEN:-400}}
set -x
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PROMPT=512 GEN=$GEN TORCHPROF=/tmp/llama_big.json timeout 500 python3 $OLDPWD/.gpu/tools/llama_decode_workload.py
ls -la /tmp/llama_big.json
python3 -c "import torch; print(torch.__version__, torch.version.cuda)"
gzip -1 -c /tmp/llama_big.json | split -b 15M - $OUT/llama_big.json.gz.part-
ls -la $OUT
