"""The eager Llama decode of ../shared/tools/llama_decode_workload.py (random weights, bf16, batch 1, the same
config) made to hold its step time, for what kernscope's tracer costs (issue 30, item 4).

Every measured decode step runs at a KV length that the warm-up already ran: the warm-up is WARM whole
generations of GEN steps, and the measurement REPS more generations of GEN steps (each a fresh DynamicCache,
a prefill, GEN decode steps). llama_live.py warmed up 8 steps and measured 128: its steps past the 8th ran
at KV lengths the process had never run, and the first step at each new length is slow while PyTorch's SDPA
uses cuDNN's attention (DIAG below, H100, 2026-11-28: KV lengths 521-544 ran at 12.1-18.8 ms with cuDNN's SDPA
off, then at 51.4-163.9 ms with it on, then 15.3-24.5 ms when run again; bench/RESULTS.md). Each decode
step is an NVTX range "measure:decode_step_<i>" (i counts over all measured generations; a name kernscope's
--step-range auto takes), with a sync at its end so each step's time is its own.

Writes one JSON object to $RESULT (else prints it): per-step ms, TPOT (mean of the steps), the median step, and
CPU ms per step (process user+system, every thread, summed over the decode loops only).
Environment: PROMPT (512), GEN (64), BS (1), WARM (1), REPS (4), RESULT (path).

LATE=1 measures before and after the tracer in one process (issue 30: paused over no tracer, where processes
drift by more than the goal): CUDA starts with CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH unset (the
driver loads nothing), REPS generations are measured, then the library the variable named is injected by
hand (ctypes, InitializeInjection), SETTLE_S seconds pass (a paused kernscope detaches CUPTI), one generation
is discarded and REPS more are measured. Without the variable (no tracer) the same schedule runs: the control
for the drift over a process's life. Adds *_before/*_after figures, the collections per measured step, and
what the callbacks in gc.callbacks (kernscope's Python hook, there from the start under `record`, so in both
halves) cost per collection, timed here against none. Beside each generation a fixed stretch of interpreter work
is timed (probe), in case the drift within a process is the host's CPU speed (on the H200 it was not: TPOT per
probe time did not cancel it, bench/RESULTS.md).

DIAG=1 instead runs the regime check of llama_live.py's step jump in one process: a warm-up of 8 steps, then
generations of 32 steps with cuDNN's SDPA off, 48 steps as is, and 48 steps as is again, printing each step."""
import time
T0 = time.time()
import os
LATE = os.environ.get("LATE") == "1"
LATE_LIBRARY = os.environ.pop("CUDA_INJECTION64_PATH", None) if LATE else None  # before CUDA starts (torch)
if LATE:
    os.environ.pop("NVTX_INJECTION64_PATH", None)
import ctypes, gc, json, resource, statistics, sys, torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
env = lambda k, d: int(os.environ.get(k, d))
PROMPT, GEN, BS, WARM, REPS = env("PROMPT", 512), env("GEN", 64), env("BS", 1), env("WARM", 1), env("REPS", 4)
T1 = time.time()
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg).to(dtype=torch.bfloat16).eval()
T2 = time.time()
ids = torch.randint(0, cfg.vocab_size, (BS, PROMPT), device="cuda")
nvtx = torch.cuda.nvtx


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def generation(tag, first, steps):
    """A prefill and `steps` decode steps; returns each step's ms and the CPU seconds of the decode loop."""
    cache = DynamicCache()
    with nvtx.range(f"{tag}:prefill"):
        o = model(input_ids=ids, past_key_values=cache, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()
    times = []
    c0 = cpu_s()
    for i in range(steps):
        t0 = time.perf_counter()
        nvtx.range_push(f"{tag}:decode_step_{first + i}")
        o = model(input_ids=nxt, past_key_values=o.past_key_values, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
        nvtx.range_pop()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, cpu_s() - c0


with torch.inference_mode():
    if os.environ.get("DIAG"):
        print("attn_implementation", model.config._attn_implementation, "cudnn_sdp", torch.backends.cuda.cudnn_sdp_enabled(),
              "flash_sdp", torch.backends.cuda.flash_sdp_enabled(), "mem_efficient_sdp", torch.backends.cuda.mem_efficient_sdp_enabled(),
              "torch", torch.__version__, flush=True)
        show = lambda name, t: print(f"{name}: " + " ".join(f"{x:.1f}" for x in t), flush=True)
        show("A warm-up, 8 steps (KV 513-520)", generation("warmup", 0, 8)[0])
        torch.backends.cuda.enable_cudnn_sdp(False)
        show("B cuDNN SDPA off, 32 steps (KV 513-544)", generation("nocudnn", 0, 32)[0])
        torch.backends.cuda.enable_cudnn_sdp(True)
        show("C as is, 48 steps (KV 513-560)", generation("asis", 0, 48)[0])
        show("D as is again, 48 steps", generation("again", 0, 48)[0])
        raise SystemExit(0)
    for w in range(WARM):
        generation("warmup", w * GEN, GEN)
    T3 = time.time()

    def probe(n=6_000_000):
        """Seconds for a fixed stretch of plain interpreter work: how fast the host runs CPU work right now. No
        CUDA, no tensors."""
        table, acc = list(range(1024)), 0
        t0 = time.perf_counter()
        for i in range(n):
            acc += table[i & 1023]
        return time.perf_counter() - t0

    def measure(first_rep):
        """REPS generations: each step's ms, CPU seconds of the decode loops, gen-0/1/2 collections, and each
        generation's mean step over the probe timed beside it (LATE only; the order alternating)."""
        times, cpu, per_probe = [], 0.0, []
        collections = sum(g["collections"] for g in gc.get_stats())
        for r in range(first_rep, first_rep + REPS):
            p = probe() if LATE and r % 2 == 0 else None
            t, c = generation("measure", r * GEN, GEN)
            if LATE:
                per_probe.append(statistics.mean(t) / (p if p is not None else probe()))
            times += t
            cpu += c
        return times, cpu, sum(g["collections"] for g in gc.get_stats()) - collections, per_probe

    times, cpu, collections, per_probe = measure(0)
    if LATE:
        before = (times, cpu, collections, per_probe)
        if LATE_LIBRARY:
            ctypes.CDLL(LATE_LIBRARY, mode=os.RTLD_NOW | ctypes.RTLD_GLOBAL).InitializeInjection()
        time.sleep(float(os.environ.get("SETTLE_S", "1.5")))
        # On stderr, where the tracer's KERNSCOPE_DEBUG_DETACH lines go: paused_floor.sh checks the detach came first.
        print("llama_cost: the after half starts", file=sys.stderr, flush=True)
        generation("warmup", WARM * GEN, GEN)  # as the warm-up before the first half
        times, cpu, collections, per_probe = measure(REPS)
        after = (times, cpu, collections, per_probe)


def gc_callbacks_cost_us(rounds=5, n=2000):
    """What the callbacks in gc.callbacks add to one collection, in microseconds: gen-0 collections timed with
    them and without, alternating, the median of the differences; 0 callbacks: nothing to time."""
    callbacks = list(gc.callbacks)
    if not callbacks:
        return 0.0, 0

    def per_collection():
        t0 = time.perf_counter()
        for _ in range(n):
            gc.collect(0)
        return (time.perf_counter() - t0) / n

    diffs = []
    for _ in range(rounds):
        with_them = per_collection()
        gc.callbacks[:] = []
        without = per_collection()
        gc.callbacks[:] = callbacks
        diffs.append((with_them - without) * 1e6)
    return statistics.median(diffs), len(callbacks)


def threads_cpu_ms():
    """CPU time of this process's threads so far, summed by thread name (kernscope's are "ks-...")."""
    tick, out = os.sysconf("SC_CLK_TCK"), {}
    for tid in os.listdir("/proc/self/task"):
        try:
            comm = open(f"/proc/self/task/{tid}/comm").read().strip()
            fields = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        out[comm] = out.get(comm, 0.0) + (int(fields[11]) + int(fields[12])) * 1e3 / tick  # utime, stime
    return {k: round(v, 1) for k, v in sorted(out.items())}


res = {"tpot_ms": sum(times) / len(times), "median_step_ms": statistics.median(times),
       "cpu_ms_per_step": cpu * 1e3 / len(times), "steps": len(times),
       "import_s": round(T1 - T0, 2), "init_s": round(T2 - T1, 2), "warmup_s": round(T3 - T2, 2), "step_ms": [round(t, 4) for t in times],
       "threads_cpu_ms": threads_cpu_ms(), "wall_s": round(time.time() - T0, 2)}
if LATE:
    for half, (t, c, n, p) in (("before", before), ("after", after)):
        res[f"tpot_ms_{half}"] = sum(t) / len(t)
        res[f"tpot_per_probe_{half}"] = statistics.median(p)
        res[f"median_step_ms_{half}"] = statistics.median(t)
        res[f"cpu_ms_per_step_{half}"] = c * 1e3 / len(t)
        res[f"collections_per_step_{half}"] = n / len(t)
    res["injected"] = bool(LATE_LIBRARY)
    res["gc_callbacks_us_per_collection"], res["gc_callbacks"] = gc_callbacks_cost_us()
if os.environ.get("RESULT"):
    with open(os.environ["RESULT"], "w") as f:
        json.dump(res, f)
else:
    print(json.dumps(res), flush=True)
