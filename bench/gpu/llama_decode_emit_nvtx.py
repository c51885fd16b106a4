# A copy of ../shared/tools/llama_decode_workload.py (the workload of the bundled llama_decode_h200 trace)
# whose measured decode loop runs inside torch.autograd.profiler.emit_nvtx(record_shapes=True): every
# aten op of the GEN measured decode steps becomes an NVTX range carrying its input shapes, nested in
# the workload's own `measure:decode_step` ranges (the prefill and the warmup run stay without). The
# workload builds its model at import, so it cannot be wrapped from outside; this copy differs from it
# only in the lines marked "emit_nvtx" and in lacking its TORCHPROF option.
# Run it under nsys (bench/gpu/fixtures_session11.sh): PROMPT, GEN, BS as in the original.
import os, sys, time, torch
from contextlib import nullcontext  # emit_nvtx
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache
torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
prompt = int(os.environ.get("PROMPT", 512)); out = int(os.environ.get("GEN", 64)); bs = int(os.environ.get("BS", 1))
model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
ids = torch.randint(0, cfg.vocab_size, (bs, prompt), device="cuda")
nvtx = torch.cuda.nvtx
def run(tag):
    cache = DynamicCache()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    with nvtx.range(f"{tag}:prefill"):
        o = model(input_ids=ids, past_key_values=cache, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize(); t1 = time.perf_counter()
    shapes = torch.autograd.profiler.emit_nvtx(record_shapes=True) if tag == "measure" else nullcontext()  # emit_nvtx
    with shapes:  # emit_nvtx
        for i in range(out):
            with nvtx.range(f"{tag}:decode_step"):
                o = model(input_ids=nxt, past_key_values=o.past_key_values, use_cache=True)
                nxt = o.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize(); t2 = time.perf_counter()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3 / out
with torch.inference_mode():
    run("warmup")
    ttft, tpot = run("measure")
print(f"TTFT_ms={ttft:.2f} TPOT_ms={tpot:.3f}", flush=True)
