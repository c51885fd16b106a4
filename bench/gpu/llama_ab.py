# The eager Llama decode of ../shared/tools/llama_decode_workload.py (same model, batch 1), measured
# untraced and traced in one process: blocks of decode steps alternate, each traced block between
# torch.cuda.profiler.start() and stop() (cudaProfilerStart/Stop). Run it under
#   kernscope record --capture-range=cudaProfilerApi --capture-range-end=repeat -- python3 llama_ab.py
# and the tracer records only the traced blocks; without a tracer both kinds of block run alike.
# Prints per-block TPOT medians and the ratio traced/untraced. Environment: PROMPT (512), STEPS per
# block (32), BLOCKS (8 of each kind), NVTX=1 to put an NVTX range around each step (as the
# workload does).
import os, statistics, time, torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
prompt = int(os.environ.get("PROMPT", 512))
steps = int(os.environ.get("STEPS", 32))
blocks = int(os.environ.get("BLOCKS", 8))
use_nvtx = os.environ.get("NVTX", "1") == "1"
model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
ids = torch.randint(0, cfg.vocab_size, (1, prompt), device="cuda")


def block(traced):
    cache = DynamicCache()
    o = model(input_ids=ids, past_key_values=cache, use_cache=True)
    nxt = o.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()
    if traced:
        torch.cuda.profiler.start()
    t0 = time.perf_counter()
    for _ in range(steps):
        if use_nvtx:
            torch.cuda.nvtx.range_push("decode_step")
        o = model(input_ids=nxt, past_key_values=o.past_key_values, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
        if use_nvtx:
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    if traced:
        torch.cuda.profiler.stop()
    return (t1 - t0) * 1e3 / steps


with torch.inference_mode():
    block(False)  # warm-up
    plain, traced = [], []
    for _ in range(blocks):
        plain.append(block(False))
        traced.append(block(True))
p, t = statistics.median(plain), statistics.median(traced)
ratios = sorted(b / a for a, b in zip(plain, traced))
print(f"untraced_TPOT_ms={p:.3f} traced_TPOT_ms={t:.3f} overhead={100 * (t / p - 1):+.2f}% "
      f"pairwise_median={100 * (ratios[len(ratios) // 2] - 1):+.2f}% range={100 * (ratios[0] - 1):+.1f}..{100 * (ratios[-1] - 1):+.1f}%",
      flush=True)
