#!/usr/bin/env python3
"""Hugging Face `model.generate()` of a small random-init model, with the program's own measured truth.

Issue 44 ("a step is one forward pass"): traces of plain `generate()` (no step annotations, eager, DynamicCache),
captured by `kernscope record`, nsys and torch.profiler, beside what the program itself measured in the same run:
the number of forward passes, the tokens each forward took, the time to the first token and the per-token period.

Models (random weights, built from a config, never downloaded; bf16):
  dense  LlamaConfig:   --layers 2, hidden 512, 8 heads (8 KV heads), MLP 1408, vocab 32000
  moe    MixtralConfig: --layers 2, hidden 512, 8 heads (8 KV heads), 4 local experts of MLP 1024, top-2,
         vocab 32000; transformers' default experts implementation (recorded in the truth, per forward)

Each of --calls generate() calls (the first is a warm-up, traced like the others) takes --batch sequences of
--prompt random tokens and makes exactly --new tokens (min_new_tokens = max_new_tokens = --new, greedy,
pad_token_id set), then the host sleeps --gap-ms (a gap between requests) before the next call.

Truth, per call, all host clocks (time.perf_counter_ns, CLOCK_MONOTONIC on Linux):
  entry_ns / exit_ns   around the call; exit after torch.cuda.synchronize()
  token_ns             when each new token reached the host: a BaseStreamer's put() (generate calls it with the
                       prompt first, then once per new token with a tensor already copied to the CPU); where
                       generate refuses the streamer, a LogitsProcessor that synchronizes and stamps instead
                       (truth "token_clock" says which)
  forward_ns, forward_tokens   a forward pre-hook on the top-level model: each forward's start and the
                       input_ids shape it was given (tokens = batch x sequence length of that input)
  ttft_ms = first token_ns - entry_ns; period_ms = differences of consecutive token_ns; wall_ms = exit - entry

usage: hf_generate.py --model dense|moe [--batch 1] [--prompt 64] [--new 10] [--calls 3] [--gap-ms 50]
                      [--torchprof OUT.json [--stack]] [--truth OUT.json] [--device cuda]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["dense", "moe"], required=True)
    ap.add_argument("--batch", type=int, default=1, help="sequences per generate() call")
    ap.add_argument("--prompt", type=int, default=64, help="prompt tokens per sequence")
    ap.add_argument("--new", type=int, default=10, help="new tokens per sequence (exactly: min_new_tokens too)")
    ap.add_argument("--calls", type=int, default=3, help="generate() calls; the first is a warm-up, traced too")
    ap.add_argument("--gap-ms", type=float, default=50.0, help="host sleep between calls (a gap between requests)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torchprof", metavar="OUT.json", help="wrap all calls in torch.profiler (CPU + CUDA), export here")
    ap.add_argument("--stack", action="store_true", help="with --torchprof: with_stack=True, record_shapes=True")
    ap.add_argument("--truth", metavar="OUT.json", help="write the program's own measurements here")
    ap.add_argument("--device", default="cuda", help="cuda (the point); cpu only to test this program")
    a = ap.parse_args(argv)
    if a.stack and not a.torchprof:
        ap.error("--stack needs --torchprof")
    if a.batch < 1 or a.prompt < 1 or a.new < 2 or a.calls < 1:
        ap.error("--batch, --prompt, --calls >= 1 and --new >= 2")
    return a


def build_model(a, torch):
    """The config, the model (random init on the CPU, then moved: like loading weights) and a summary."""
    import transformers
    if a.model == "dense":
        cfg = transformers.LlamaConfig(
            hidden_size=a.hidden, intermediate_size=1408, num_hidden_layers=a.layers,
            num_attention_heads=a.heads, num_key_value_heads=a.heads, vocab_size=a.vocab,
            max_position_embeddings=2048)
        cls = transformers.LlamaForCausalLM
    else:
        cfg = transformers.MixtralConfig(
            hidden_size=a.hidden, intermediate_size=1024, num_hidden_layers=a.layers,
            num_attention_heads=a.heads, num_key_value_heads=a.heads, vocab_size=a.vocab,
            num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=2048)
        cls = transformers.MixtralForCausalLM
    torch.manual_seed(a.seed)
    model = cls(cfg)
    dtype = torch.bfloat16 if a.device != "cpu" else torch.float32
    model = model.to(device=a.device, dtype=dtype).eval()
    keys = ["model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "vocab_size", "num_local_experts", "num_experts_per_tok",
            "eos_token_id", "bos_token_id", "pad_token_id"]
    summary = {k: getattr(model.config, k) for k in keys if hasattr(model.config, k)}
    summary["class"] = type(model).__name__
    summary["dtype"] = str(dtype).replace("torch.", "")
    summary["parameters"] = sum(p.numel() for p in model.parameters())
    summary["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    return model, summary


def experts_impl(model):
    """What transformers says the experts run with (None for a dense model)."""
    if model.config.model_type != "mixtral":
        return None
    get = getattr(model, "get_experts_implementation", None)
    if callable(get):
        try:
            return get()
        except Exception as e:  # noqa: BLE001 (only recorded)
            return {"error": repr(e)}
    return getattr(model.config, "_experts_implementation", None)


def main(argv=None):
    a = parse_args(argv)
    import torch
    import transformers
    from transformers.generation.streamers import BaseStreamer
    from transformers import LogitsProcessor, LogitsProcessorList

    cuda = a.device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    now = time.perf_counter_ns
    model, summary = build_model(a, torch)
    experts_before = experts_impl(model)

    # One record per call, filled by the hook and the streamer while that call runs.
    cur = {}

    def pre_hook(module, args, kwargs):
        ids = kwargs.get("input_ids")
        if ids is None and args:
            ids = args[0]
        emb = kwargs.get("inputs_embeds")
        shape = list(ids.shape) if ids is not None else (list(emb.shape[:2]) if emb is not None else None)
        cur.setdefault("forward_ns", []).append(now())
        cur.setdefault("forward_shape", []).append(shape)
        if model.config.model_type == "mixtral":
            cur.setdefault("forward_experts_impl", []).append(getattr(model.config, "_experts_implementation", None))
        return None

    model.register_forward_pre_hook(pre_hook, with_kwargs=True)

    class Stamp(BaseStreamer):
        """put(): the prompt first, then each new token (already on the CPU); end(): generation done."""
        def put(self, value):
            t = now()
            if "prompt_put_ns" not in cur:
                cur["prompt_put_ns"] = t
                cur["prompt_put_shape"] = list(value.shape)
                return
            cur.setdefault("token_ns", []).append(t)
            cur.setdefault("token_shape", []).append(list(value.shape))

        def end(self):
            cur["streamer_end_ns"] = now()

    class StampLP(LogitsProcessor):
        """Fallback: synchronize when the logits of a new token are there, stamp."""
        def __call__(self, input_ids, scores):
            sync()
            cur.setdefault("token_ns", []).append(now())
            cur.setdefault("token_shape", [list(scores.shape[:1])])
            return scores

    token_clock = "streamer"
    g = torch.Generator().manual_seed(a.seed + 1)
    prompts = [torch.randint(3, a.vocab, (a.batch, a.prompt), generator=g) for _ in range(a.calls)]
    pad = 0

    def one_call(ids):
        nonlocal token_clock
        ids = ids.to(a.device)
        mask = torch.ones_like(ids)
        kw = dict(input_ids=ids, attention_mask=mask, max_new_tokens=a.new, min_new_tokens=a.new,
                  do_sample=False, pad_token_id=pad, use_cache=True)
        sync()
        cur.clear()
        cur["entry_ns"] = now()
        if token_clock == "streamer":
            try:
                out = model.generate(**kw, streamer=Stamp())
            except ValueError as e:
                if "stream" not in str(e).lower():
                    raise
                print(f"generate refused the streamer ({e}); stamping from a LogitsProcessor", file=sys.stderr)
                token_clock = "logits_processor_sync"
                cur.clear()
                cur["entry_ns"] = now()
                out = model.generate(**kw, logits_processor=LogitsProcessorList([StampLP()]))
        else:
            out = model.generate(**kw, logits_processor=LogitsProcessorList([StampLP()]))
        sync()
        cur["exit_ns"] = now()
        rec = dict(cur)
        rec["output_shape"] = list(out.shape)
        return rec

    clock_pair = {"perf_counter_ns": now(), "time_ns": time.time_ns(),
                  "monotonic_ns": time.monotonic_ns(),
                  "clock_monotonic_raw_ns": time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
                  if hasattr(time, "CLOCK_MONOTONIC_RAW") else None}

    calls = []
    prof = None
    if a.torchprof:
        from torch.profiler import profile, ProfilerActivity
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        opts = dict(with_stack=True, record_shapes=True) if a.stack else {}
        prof = profile(activities=acts, **opts)
        prof.__enter__()
    t_first = now()
    with torch.inference_mode():
        for i in range(a.calls):
            if i:
                time.sleep(a.gap_ms / 1e3)
            calls.append(one_call(prompts[i]))
    t_last = now()
    if prof is not None:
        prof.__exit__(None, None, None)
        t_exp = time.perf_counter()
        prof.export_chrome_trace(a.torchprof)
        print(f"torch.profiler trace {a.torchprof}: {os.path.getsize(a.torchprof)} bytes, "
              f"export {time.perf_counter() - t_exp:.1f} s", file=sys.stderr)

    ms = lambda ns: ns / 1e6  # noqa: E731
    out_calls = []
    ok = True
    for i, c in enumerate(calls):
        tok = c.get("token_ns", [])
        fwd = c.get("forward_ns", [])
        periods = [ms(b - x) for x, b in zip(tok, tok[1:])]
        shapes = c.get("forward_shape", [])
        tokens_per_forward = [s[0] * s[1] if s and len(s) == 2 else None for s in shapes]
        rec = {
            "call": i, "warmup": i == 0, "batch": a.batch, "prompt_len": a.prompt,
            "forwards": len(fwd), "new_tokens": len(tok), "output_shape": c["output_shape"],
            "tokens_per_forward": tokens_per_forward, "forward_input_shape": shapes,
            "ttft_ms": ms(tok[0] - c["entry_ns"]) if tok else None,
            "period_ms_median": statistics.median(periods) if periods else None,
            "period_ms": periods,
            "forward_start_period_ms": [ms(b - x) for x, b in zip(fwd, fwd[1:])],
            "wall_ms": ms(c["exit_ns"] - c["entry_ns"]),
            "entry_ns": c["entry_ns"], "exit_ns": c["exit_ns"],
            "token_ns": tok, "forward_ns": fwd,
            "prompt_put_ns": c.get("prompt_put_ns"), "prompt_put_shape": c.get("prompt_put_shape"),
            "token_shape": sorted({tuple(s) for s in c.get("token_shape", [])}),
        }
        if "forward_experts_impl" in c:
            rec["forward_experts_impl"] = c["forward_experts_impl"]
        if c.get("output_shape") != [a.batch, a.prompt + a.new] or len(tok) != a.new:
            ok = False
        out_calls.append(rec)

    all_periods = [p for c in out_calls for p in c["period_ms"]]
    steady = [c for c in out_calls if not c["warmup"]] or out_calls
    truth = {
        "program": "bench/gpu/steps/hf_generate.py",
        "argv": sys.argv[1:],
        "model": a.model, "batch": a.batch, "prompt_len": a.prompt, "new_tokens": a.new, "calls": a.calls,
        "gap_ms": a.gap_ms, "traced_by_torch_profiler": bool(a.torchprof), "torch_profiler_stack": a.stack,
        "token_clock": token_clock,
        "forwards_total": sum(c["forwards"] for c in out_calls),
        "new_tokens_total_per_sequence": sum(c["new_tokens"] for c in out_calls),
        "ttft_ms_per_call": [c["ttft_ms"] for c in out_calls],
        "period_ms_median_all_calls": statistics.median(all_periods) if all_periods else None,
        "period_ms_median_without_warmup": statistics.median([p for c in steady for p in c["period_ms"]])
        if any(c["period_ms"] for c in steady) else None,
        "ttft_ms_median_without_warmup": statistics.median([c["ttft_ms"] for c in steady if c["ttft_ms"] is not None])
        if steady else None,
        "all_calls_made_exactly_new_tokens": ok,
        "calls_span_ns": [t_first, t_last],
        "clock": "time.perf_counter_ns (CLOCK_MONOTONIC); clock_pair sampled together to align with traces",
        "clock_pair": clock_pair,
        "config": summary,
        "experts_implementation": {"before_generate": experts_before, "after_generate": experts_impl(model)}
        if a.model == "moe" else None,
        "versions": {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                     "transformers": transformers.__version__, "python": platform.python_version()},
        "gpu": torch.cuda.get_device_name() if cuda else None,
        "pid": os.getpid(),
        "per_call": out_calls,
    }
    for c in out_calls:
        print(f"call {c['call']}: forwards {c['forwards']} tokens {c['new_tokens']} "
              f"ttft {c['ttft_ms']:.2f} ms period p50 {c['period_ms_median']:.2f} ms wall {c['wall_ms']:.1f} ms "
              f"tokens/forward {c['tokens_per_forward']}", flush=True)
    if a.model == "moe":
        print(f"experts implementation: {truth['experts_implementation']}; per forward "
              f"{sorted(set(map(str, out_calls[-1].get('forward_experts_impl', []))))}", flush=True)
    print(f"token clock: {token_clock}; exact tokens: {ok}", flush=True)
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(truth, f, indent=1)
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
