"""The eager Llama decode (random weights, bf16; tools/llama_decode_workload.py's model) with per-step
timing, for what live capture costs (issue 30, item 4). Each decode step is an NVTX range named
"decode_step_<i>" (a step name kernscope and the tracer's --step-range auto recognise), synchronized
at its end so each step's time is its own. Prints one JSON line: per-step milliseconds, TPOT (mean
of the steps), and CPU time per step (process user+system over the decode loop).
Environment: PROMPT (512), GEN (decode steps, 128), BS (1)."""
import json, os, resource, time, torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
prompt, gen, bs = int(os.environ.get("PROMPT", 512)), int(os.environ.get("GEN", 128)), int(os.environ.get("BS", 1))
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg).to(dtype=torch.bfloat16).eval()
ids = torch.randint(0, cfg.vocab_size, (bs, prompt), device="cuda")
nvtx = torch.cuda.nvtx


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(tag, steps):
    cache = DynamicCache()
    with nvtx.range(f"{tag}:prefill"):
        o = model(input_ids=ids, past_key_values=cache, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()
    times = []
    c0 = cpu_s()
    for i in range(steps):
        t0 = time.perf_counter()
        nvtx.range_push(f"{tag}:decode_step_{i}")
        o = model(input_ids=nxt, past_key_values=o.past_key_values, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
        nvtx.range_pop()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, (cpu_s() - c0) * 1e3 / steps


with torch.inference_mode():
    run("warmup", 8)
    times, cpu_ms = run("measure", gen)
print(json.dumps({"step_ms": [round(t, 4) for t in times], "tpot_ms": sum(times) / len(times), "cpu_ms_per_step": cpu_ms}), flush=True)
