# python_gaps: eager PyTorch steps with unannotated pure-Python work between the launches (issue 46).
#
#   python3 python_gaps.py before   each step: about --python-ms of pure Python (a loop over a list of floats,
#                                   standing for request bookkeeping, detokenization, scheduling), then the
#                                   forward of a small eager model, then the host reads one number of the
#                                   result (.item(): the step's end waits for the GPU). The Python runs after
#                                   the previous step's last launch and before this step's first one, with no
#                                   NVTX range of its own, so the GPU idles through it: step ~ Python + forward
#   python3 python_gaps.py after    the same steps without the Python work: step ~ forward (GPU-bound: the
#                                   forward's launches take far less host time than its kernels' GPU time)
#
# The model: --layers blocks of nn.Linear(--hidden, --hidden) + GELU, bf16, input (--batch, --seq, --hidden):
# 8 x 2*16*1024*2048*2048 = 1.1 TFLOP a forward, about 1.5 ms of GPU on an H100/H200. The Python work is a
# fixed number of passes over a 1000-element list, calibrated once at start (before the warm-up) to take
# --python-ms; each step's Python time is measured too (truth, not an annotation).
# Steps are NVTX ranges "warmup" (--warmup of them) then "step" (--steps), nothing inside them.
# Truth (the program's own clock): STEP_MS = wall of the measured loop (torch.cuda.synchronize before and
# after) / steps; each step's wall (perf_counter between step starts: each step ends on the host's .item());
# --json PATH writes them with the Python work's per-step times.
import argparse
import json
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("variant", choices=("before", "after"))
p.add_argument("--steps", type=int, default=40)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--hidden", type=int, default=2048)
p.add_argument("--batch", type=int, default=16)
p.add_argument("--seq", type=int, default=1024)
p.add_argument("--python-ms", type=float, default=3.0)
p.add_argument("--json")
a = p.parse_args()
before = a.variant == "before"

torch.manual_seed(0)
dev = torch.device("cuda")
blocks = []
for _ in range(a.layers):
    blocks += [torch.nn.Linear(a.hidden, a.hidden), torch.nn.GELU()]
model = torch.nn.Sequential(*blocks).to(device=dev, dtype=torch.bfloat16).eval()
x = torch.randn(a.batch, a.seq, a.hidden, device=dev, dtype=torch.bfloat16)
nvtx = torch.cuda.nvtx

items = [i * 0.5 for i in range(1000)]


def python_work(passes):
    acc = 0.0
    for _ in range(passes):
        for v in items:
            acc += v * v
    return acc


# Calibrate the Python work: passes such that it takes --python-ms (median of 5 timings of 20 passes).
ts = []
for _ in range(5):
    t = time.perf_counter()
    python_work(20)
    ts.append((time.perf_counter() - t) / 20)
passes = max(1, round(a.python_ms / 1e3 / statistics.median(ts)))


def step():
    py = 0.0
    if before:
        t = time.perf_counter()
        python_work(passes)
        py = time.perf_counter() - t
    with torch.inference_mode():
        y = model(x)
        r = y[0, 0, :8].float().sum().item()  # the host reads the result: waits for the GPU
    return py, r


for _ in range(a.warmup):
    nvtx.range_push("warmup")
    step()
    nvtx.range_pop()
torch.cuda.synchronize()
each, pys = [], []
t0 = time.perf_counter()
prev = t0
for _ in range(a.steps):
    nvtx.range_push("step")
    py, r = step()
    nvtx.range_pop()
    now = time.perf_counter()
    each.append((now - prev) * 1e3)
    pys.append(py * 1e3)
    prev = now
torch.cuda.synchronize()
ms = (time.perf_counter() - t0) * 1e3
truth = {
    "program": "python_gaps", "variant": a.variant, "steps": a.steps, "warmup": a.warmup, "layers": a.layers,
    "hidden": a.hidden, "batch": a.batch, "seq": a.seq, "python_passes": passes, "python_ms_target": a.python_ms,
    "step_ms": round(ms / a.steps, 4), "step_ms_median": round(statistics.median(each), 4),
    "python_ms_median": round(statistics.median(pys), 4), "result": r,
    "step_ms_each": [round(v, 4) for v in each], "python_ms_each": [round(v, 4) for v in pys],
}
print(f"python_gaps {a.variant}: {a.steps} steps, {a.layers} x Linear({a.hidden}) bf16 on ({a.batch}, {a.seq}), "
      f"python {passes} passes ({truth['python_ms_median']:.3f} ms median); STEP_MS={truth['step_ms']:.4f} "
      f"STEP_MEDIAN_MS={truth['step_ms_median']:.4f} (result {r:.4f})")
if a.json:
    with open(a.json, "w") as f:
        json.dump(truth, f)
        f.write("\n")
