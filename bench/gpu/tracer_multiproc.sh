#!/bin/bash
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
cat > /tmp/mp.py <<'PY'
import multiprocessing as mp, subprocess, sys
def work(i):
    import torch
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(50 + i):
        x = x * 1.0001
    torch.cuda.synchronize()
    return i
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        print(pool.map(work, [0, 1]))
    # and a child started by exec (subprocess)
    subprocess.run([sys.executable, "-c", "import torch; torch.ones(3, device='cuda').sum().item()"], check=True)
PY
timeout 120 $K record -o /tmp/mp-%p.sqlite -- python3 /tmp/mp.py 2>&1 | grep -v "^kernscope tracer"
echo "== nvtx capture range records its own range"
nvcc -O2 -std=c++17 -arch=sm_90 $R/.gpu/decode_bench.cu -lcublas -o /tmp/db || exit 1
timeout 100 $K record --capture-range nvtx:measure:prefill --capture-range-end repeat -o /tmp/nv.sqlite -- /tmp/db --layers 2 --iters 2 --warmup 1 --output-len 4 --prompt-len 128 --cuda-graph off 2>&1 | tail -1
$K stats -r nvtx_sum -f csv /tmp/nv.sqlite
