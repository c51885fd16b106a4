#!/bin/bash
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
cat > /tmp/mp2.py <<'PY'
import multiprocessing as mp
def work(i):
    import torch
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(50 + i):
        x = x * 1.0001
    torch.cuda.synchronize()
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    ps = [ctx.Process(target=work, args=(i,)) for i in range(2)]
    for p in ps: p.start()
    for p in ps: p.join()
    print("exit codes", [p.exitcode for p in ps])
PY
timeout 120 $K record -o /tmp/mp2-%p.sqlite -- python3 /tmp/mp2.py 2>&1 | grep -v "^kernscope tracer: wrote"
