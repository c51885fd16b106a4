"""A GPU-bound loop whose steps begin by waiting for the work the previous step queued, traced by the
PyTorch profiler with a warm-up step before its window: the window's first step waits in
torch.cuda.synchronize() for kernels launched before the window opened (the profiler records those
kernels, not their launches), as in TraceLens's Qwen traces. The what-if replay must replay that
queued work too: `whatif --change scale=gemm:R` on the --inner 8192 trace, R the GEMM kernels' time
ratio of the two variants, is checked against the --inner 4096 program's measured step time.

Each step: torch.cuda.synchronize() (the previous step's GPU work), then LAYERS layers of
    t = x @ A (M x INNER), y = t @ B (M x H), x = x + gelu(y)
so halving --inner halves the GEMMs' work and leaves the elementwise work (M x H) as it is. The host
launches far ahead of the GPU: a step lasts its GPU work. STEP_MS: the median time between two
successive returns of the synchronize (one step's GPU work, in steady state).

usage: queued_window.py --inner K [--steps S] [--warmup W] [--profile OUT.json.gz] --json OUT
  --profile: the steps run under torch.profiler (CPU + CUDA) with schedule(wait=1, warmup=1,
  active=S): ProfilerStep#N ranges, the warm-up step's kernels queued into the first active step.
"""
import argparse
import json
import statistics
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--inner", type=int, required=True)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--warmup", type=int, default=5)
ap.add_argument("--layers", type=int, default=24)
ap.add_argument("--m", type=int, default=2048)
ap.add_argument("--hidden", type=int, default=4096)
ap.add_argument("--profile")
ap.add_argument("--json", required=True)
a = ap.parse_args()

torch.manual_seed(0)
dt = torch.bfloat16
A = [torch.randn(a.hidden, a.inner, device="cuda", dtype=dt) * 0.01 for _ in range(a.layers)]
B = [torch.randn(a.inner, a.hidden, device="cuda", dtype=dt) * 0.01 for _ in range(a.layers)]
x0 = torch.randn(a.m, a.hidden, device="cuda", dtype=dt)


def step(x):
    for i in range(a.layers):
        y = (x @ A[i]) @ B[i]
        x = x + torch.nn.functional.gelu(y)
    return x


x = x0
returns = []  # when each step's synchronize returned


def one():
    global x
    torch.cuda.synchronize()
    returns.append(time.perf_counter())
    x = step(x0)


for _ in range(a.warmup):
    one()
returns.clear()
if a.profile:
    from torch.profiler import ProfilerActivity, profile, schedule

    def ready(p):
        p.export_chrome_trace(a.profile)

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=a.steps, repeat=1), on_trace_ready=ready) as p:
        for _ in range(a.steps + 2):
            one()
            p.step()
    torch.cuda.synchronize()
else:
    for _ in range(a.steps + 1):
        one()
    torch.cuda.synchronize()
steps_ms = [(b - c) * 1e3 for c, b in zip(returns, returns[1:])]
out = {"inner": a.inner, "layers": a.layers, "m": a.m, "hidden": a.hidden, "steps": len(steps_ms),
       "traced": bool(a.profile), "step_ms": statistics.median(steps_ms), "steps_ms": steps_ms,
       "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
json.dump(out, open(a.json, "w"), indent=1)
print(f"inner={a.inner} traced={bool(a.profile)} STEP_MS={out['step_ms']:.3f}")
