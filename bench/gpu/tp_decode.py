"""A two-rank tensor-parallel decode with a known, injected straggler (issue 16).

One process per GPU (torchrun), NCCL. Each decode step runs LAYERS layers of a Megatron-style MLP split
across the ranks: a column-parallel projection (hidden -> ffn/world), GELU, a row-parallel projection
(ffn/world -> hidden) and one all-reduce (sum) of the hidden state, so every layer issues exactly one
all-reduce of hidden*batch bf16 values. Every EVERY-th step, rank DELAY_RANK sleeps DELAY_MS on the host
before its first layer: it reaches that step's first all-reduce late by about DELAY_MS, the other rank
waits for it inside the collective, and the transfer itself is unchanged. The program prints what it
issued so the trace analysis can be checked against it:
  rank=R world=W steps=S layers=L allreduces=N bytes_per_allreduce=B delayed_steps=[...] delay_ms=D
NVTX ranges: decode_step around each measured step (warm-up steps are outside them).
TORCHPROF=DIR: the measured steps run under the PyTorch profiler (CPU + CUDA, record_shapes, one
profiler step per decode step, plus a decode_step record_function), and each rank writes
DIR/rank<R>.trace.json.gz: a Kineto trace whose NCCL kernels carry record_param_comms's arguments
(collective name, process group, sequence number, "In msg nelems"/"Out msg nelems", dtype), the sizes
bus bandwidth needs. The barriers stay outside the profiled window.
Multicast stays off (NCCL_NVLS_ENABLE=0 etc. are set before NCCL starts, as the GPU machines require).
"""
import os
for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v
import time
import torch
import torch.distributed as dist

STEPS = int(os.environ.get("STEPS", 40))
WARMUP = int(os.environ.get("WARMUP", 5))
LAYERS = int(os.environ.get("LAYERS", 8))
HIDDEN = int(os.environ.get("HIDDEN", 4096))
FFN = int(os.environ.get("FFN", 14336))
BATCH = int(os.environ.get("BATCH", 1))
EVERY = int(os.environ.get("EVERY", 5))
DELAY_MS = float(os.environ.get("DELAY_MS", 2.0))
DELAY_RANK = int(os.environ.get("DELAY_RANK", 1))

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
torch.manual_seed(0)
dt = torch.bfloat16
w1 = [torch.randn(HIDDEN, FFN // world, device="cuda", dtype=dt) * 0.01 for _ in range(LAYERS)]
w2 = [torch.randn(FFN // world, HIDDEN, device="cuda", dtype=dt) * 0.01 for _ in range(LAYERS)]
x = torch.randn(BATCH, HIDDEN, device="cuda", dtype=dt)


def step(x):
    for i in range(LAYERS):
        h = torch.nn.functional.gelu(x @ w1[i])
        y = h @ w2[i]
        dist.all_reduce(y)
        x = x + y
    return x


allreduces = 0
for _ in range(WARMUP):
    x = step(x)
    allreduces += LAYERS
torch.cuda.synchronize()
dist.barrier()
TORCHPROF = os.environ.get("TORCHPROF", "")
prof = None
if TORCHPROF:
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    os.makedirs(TORCHPROF, exist_ok=True)
    # One profiler step per decode step (ProfilerStep#N ranges), every step recorded.
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                   schedule=schedule(wait=0, warmup=0, active=STEPS, repeat=1),
                   on_trace_ready=lambda p: p.export_chrome_trace(os.path.join(TORCHPROF, f"rank{rank}.trace.json.gz")))
    prof.start()
delayed = []
t0 = time.perf_counter()
for s in range(STEPS):
    torch.cuda.nvtx.range_push("decode_step")
    scope = record_function("decode_step") if prof else None
    if scope:
        scope.__enter__()
    if rank == DELAY_RANK and EVERY > 0 and s % EVERY == EVERY - 1:
        time.sleep(DELAY_MS / 1000.0)
    if EVERY > 0 and s % EVERY == EVERY - 1:
        delayed.append(s)
    x = step(x)
    allreduces += LAYERS
    torch.cuda.synchronize()
    if scope:
        scope.__exit__(None, None, None)
    torch.cuda.nvtx.range_pop()
    if prof:
        prof.step()
tpot = (time.perf_counter() - t0) / STEPS * 1000
if prof:
    prof.stop()  # the last prof.step() above closed the active window and wrote the trace (on_trace_ready)
dist.barrier()
print(f"rank={rank} world={world} steps={STEPS} warmup={WARMUP} layers={LAYERS} allreduces={allreduces} "
      f"bytes_per_allreduce={BATCH * HIDDEN * 2} delayed_steps={delayed} delay_ms={DELAY_MS} delay_rank={DELAY_RANK} "
      f"TPOT_ms={tpot:.3f}", flush=True)
dist.destroy_process_group()
