# The `graphs` what-if pair on a real LLM decode (issue 29, item 3): the Llama of
# ../shared/tools/llama_decode_workload.py (random-init HF Llama, 16 layers, hidden 2048, bf16, batch 1,
# sdpa attention), with a StaticCache in both variants so both run the same kernels.
#
#   python3 llama_pair.py eager   each decode step runs the model eagerly (one launch per kernel)
#   python3 llama_pair.py graph   the same decode step captured once in a torch.cuda.CUDAGraph (static input
#                                 ids; the StaticCache keeps its write position in a GPU tensor, so the
#                                 captured step advances it), replayed once per step
#
# The decode step (identical in both): model(input_ids=ids, past_key_values=cache), then
# ids.copy_(argmax of the last logits) -- the next step's input, on the GPU; nothing waits on the host.
# Before the runs both variants do the same set-up: a prefill and 3 decode steps on a side stream (PyTorch's
# warm-up before capture); graph then captures one step. Then two runs, each resetting the cache (in place),
# a prefill and decode steps: "warmup" (NVTX warmup:prefill, warmup:decode_step x WARM_GEN) and "measure"
# (measure:prefill, measure:decode_step x GEN). Environment: PROMPT (512), GEN (64), WARM_GEN (16).
# Prints TPOT_ms = wall of the measured decode loop (torch.cuda.synchronize before and after) / GEN, and
# last_token / kv_sum so the two variants' results can be compared (same kernels on the same inputs).
import os
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode not in ("eager", "graph"):
    sys.exit("usage: llama_pair.py eager|graph")
torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
prompt = int(os.environ.get("PROMPT", 512))
gen = int(os.environ.get("GEN", 64))
warm_gen = int(os.environ.get("WARM_GEN", 16))
bs = 1
# Built on the GPU in bf16 (the workload builds on the CPU and moves it: the same model, faster to start).
torch.set_default_dtype(torch.bfloat16)
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg)
torch.set_default_dtype(torch.float32)
model = model.to(device="cuda", dtype=torch.bfloat16).eval()
ids = torch.randint(0, cfg.vocab_size, (bs, prompt), device="cuda")
cache = StaticCache(config=cfg, max_cache_len=prompt + max(gen, warm_gen) + 8)
static_ids = torch.zeros((bs, 1), dtype=torch.long, device="cuda")
nvtx = torch.cuda.nvtx


def prefill():
    o = model(input_ids=ids, past_key_values=cache, use_cache=True)
    static_ids.copy_(o.logits[:, -1:].argmax(-1))


def decode_step():
    o = model(input_ids=static_ids, past_key_values=cache, use_cache=True)
    static_ids.copy_(o.logits[:, -1:].argmax(-1))


with torch.inference_mode():
    # Set-up, the same in both variants: the cache's tensors are made by the first prefill.
    prefill()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            decode_step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = None
    if mode == "graph":
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            decode_step()
        torch.cuda.synchronize()
    step = graph.replay if graph is not None else decode_step

    def run(tag, n):
        cache.reset()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with nvtx.range(f"{tag}:prefill"):
            prefill()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        for _ in range(n):
            with nvtx.range(f"{tag}:decode_step"):
                step()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        return (t1 - t0) * 1e3, (t2 - t1) * 1e3 / n

    run("warmup", warm_gen)
    ttft, tpot = run("measure", gen)
    kv = cache.layers[0].keys.float().sum().item()
    last = int(static_ids[0, 0].item())
print(f"llama_pair {mode}: TTFT_ms={ttft:.2f} TPOT_ms={tpot:.3f} STEP_MS={tpot:.4f} steps={gen} "
      f"last_token={last} kv_sum={kv:.6g}", flush=True)
