# warmup50x: GPU-bound steady steps (bf16 GEMMs) whose FIRST annotated step also does a one-time set-up that
# makes it about --factor (50) times a steady step (issue 46).
#
#   python3 warmup50x.py before   step 0 (the first NVTX range "step") runs the one-time set-up, then the step's
#                                 work: a --alloc-gib GiB device allocation (the caching allocator's cudaMalloc)
#                                 zeroed, --small-kernels tiny kernels (in-place adds on a 1024-float tensor),
#                                 and a host loop (filling a Python dict) that runs until the set-up has taken
#                                 (--factor - 1) x the steady step measured in the warm-up
#   python3 warmup50x.py after    the same set-up moved before the loop (outside any range); every step steady
#
# A steady step: --matmuls bf16 products (--n)^3 into a preallocated output (8192^3: 1.1 TFLOP each, about
# 1.4 ms on an H100/H200, so about 5.6 ms a step for 4), then torch.cuda.synchronize(). The known steady
# bottleneck is the GPU's GEMM work (the host waits in the synchronize).
# Every annotated step is an NVTX range "step" (no "warmup" range): --warmup steady steps run first with NO
# range (they initialize cuBLAS and give the steady time the set-up is sized from), then --steps "step" ranges.
# Truth (the program's own clock, each step ends in torch.cuda.synchronize): each step's wall (perf_counter),
# FIRST_MS (step 0), STEADY_MS (median of steps 1..), STEP_MS = wall of the measured loop / steps.
import argparse
import json
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("variant", choices=("before", "after"))
p.add_argument("--steps", type=int, default=40)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--n", type=int, default=8192)
p.add_argument("--matmuls", type=int, default=4)
p.add_argument("--factor", type=float, default=50.0)
p.add_argument("--alloc-gib", type=float, default=4.0)
p.add_argument("--small-kernels", type=int, default=2000)
p.add_argument("--json")
a = p.parse_args()
before = a.variant == "before"

torch.manual_seed(0)
dev = torch.device("cuda")
A = torch.randn(a.n, a.n, device=dev, dtype=torch.bfloat16)
B = torch.randn(a.n, a.n, device=dev, dtype=torch.bfloat16) / a.n ** 0.5
C = torch.empty(a.n, a.n, device=dev, dtype=torch.bfloat16)
nvtx = torch.cuda.nvtx


def steady():
    for _ in range(a.matmuls):
        torch.matmul(A, B, out=C)
    torch.cuda.synchronize()


kept = {}


def setup(budget_s):
    t = time.perf_counter()
    buf = torch.empty(int(a.alloc_gib * 2**30), dtype=torch.uint8, device=dev)
    buf.zero_()
    small = torch.zeros(1024, device=dev)
    for _ in range(a.small_kernels):
        small.add_(1.0)
    table = {}
    while time.perf_counter() - t < budget_s:
        for i in range(1000):
            table[len(table) % 100000] = i * 0.5
    kept.update(buf=buf, small=small, table=table)
    return time.perf_counter() - t


warm = []
for _ in range(a.warmup):
    t = time.perf_counter()
    steady()
    warm.append(time.perf_counter() - t)
steady_warm = statistics.median(warm) if warm else 0.0055
budget = (a.factor - 1) * steady_warm
setup_s = None
if not before:
    setup_s = setup(budget)
torch.cuda.synchronize()
each = []
t0 = time.perf_counter()
prev = t0
for i in range(a.steps):
    nvtx.range_push("step")
    if before and i == 0:
        setup_s = setup(budget)
    steady()
    nvtx.range_pop()
    now = time.perf_counter()
    each.append((now - prev) * 1e3)
    prev = now
torch.cuda.synchronize()
ms = (time.perf_counter() - t0) * 1e3
rest = each[1:] or each
truth = {
    "program": "warmup50x", "variant": a.variant, "steps": a.steps, "warmup_unannotated": a.warmup, "n": a.n,
    "matmuls": a.matmuls, "alloc_gib": a.alloc_gib, "small_kernels": a.small_kernels, "factor": a.factor,
    "setup_ms": round(setup_s * 1e3, 3), "setup_in_first_step": before,
    "steady_warmup_ms": round(steady_warm * 1e3, 4),
    "first_step_ms": round(each[0], 4), "steady_step_ms": round(statistics.median(rest), 4),
    "step_ms": round(ms / a.steps, 4), "step_ms_median": round(statistics.median(each), 4),
    "step_ms_each": [round(v, 4) for v in each],
    "check": float(C[:4, :4].float().sum()),
}
truth["first_over_steady"] = round(truth["first_step_ms"] / truth["steady_step_ms"], 2)
print(f"warmup50x {a.variant}: {a.steps} steps of {a.matmuls} bf16 {a.n}^3 matmuls, set-up {truth['setup_ms']:.1f} ms "
      f"({'in step 0' if before else 'before the loop'}); FIRST_MS={truth['first_step_ms']:.3f} "
      f"STEADY_MS={truth['steady_step_ms']:.4f} ({truth['first_over_steady']}x) STEP_MS={truth['step_ms']:.4f} "
      f"STEP_MEDIAN_MS={truth['step_ms_median']:.4f}")
if a.json:
    with open(a.json, "w") as f:
        json.dump(truth, f)
        f.write("\n")
