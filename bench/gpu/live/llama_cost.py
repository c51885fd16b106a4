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

DIAG=1 instead runs the regime check of llama_live.py's step jump in one process: a warm-up of 8 steps, then
generations of 32 steps with cuDNN's SDPA off, 48 steps as is, and 48 steps as is again, printing each step."""
import time
T0 = time.time()
import json, os, resource, statistics, torch
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
    times, cpu = [], 0.0
    for r in range(REPS):
        t, c = generation("measure", r * GEN, GEN)
        times += t
        cpu += c


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
if os.environ.get("RESULT"):
    with open(os.environ["RESULT"], "w") as f:
        json.dump(res, f)
else:
    print(json.dumps(res), flush=True)
