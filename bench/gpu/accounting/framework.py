# framework: 30 steps, each in a torch.cuda.nvtx range "step": a slow "data" part (a torch.cuda.nvtx range
# "data" around ~20 ms of CPU work: sorting on the CPU until 20 ms have passed, no CUDA call), then a
# small GPU matmul. Expected accounting: bottleneck host, host.framework dominant (the "data" range).
import time, torch

STEPS, DATA_S = 30, 0.020
nvtx = torch.cuda.nvtx
a = torch.randn(512, 512, device="cuda")
b = torch.randn(512, 512, device="cuda")
cpu = torch.randn(200_000)
torch.cuda.synchronize()
t_data = t_step = 0.0
for i in range(STEPS):
    t0 = time.perf_counter()
    with nvtx.range("step"):
        with nvtx.range("data"):
            while time.perf_counter() - t0 < DATA_S:
                cpu = cpu.sort().values.flip(0)
        t1 = time.perf_counter()
        c = a @ b
        c = c.relu_()
        torch.cuda.synchronize()
    if i > 0:
        t_data += t1 - t0
        t_step += time.perf_counter() - t0
print(f"framework: {STEPS} steps, {1e3 * t_step / (STEPS - 1):.3f} ms per step after the first, "
      f"{1e3 * t_data / (STEPS - 1):.3f} ms of it in 'data'", flush=True)
