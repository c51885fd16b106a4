#!/usr/bin/env python3
"""A small Hugging Face Mixtral-style MoE model (random weights, built from a config, never
downloaded) whose router is biased to a known skew, or replaced by a perfect router, counting the
tokens each expert receives per layer itself. Issue 31's GPU check: kernscope's tokens per expert
and imbalance must equal this program's counts; its perfect-router estimate from the skewed run
is compared with the measured step time of `--router even`.

Written for PyTorch 2.11 (cu130) and transformers 5.17 (see docs/research/moe_and_speculative_
evidence.md, "Hugging Face eager MoE"): in transformers 5.x a Mixtral MoE block is
`MixtralSparseMoeBlock` with `gate` = `MixtralTopKRouter` (a bare (E, hidden) weight; forward
returns (router_logits, top_k_weights, top_k_index)) and `experts` = `MixtralExperts` (3-D
gate_up_proj / down_proj parameters). How the experts run is `config._experts_implementation`:
"eager" is a Python loop over the experts that were hit (F.linear per expert: the per-expert
aten::linear / aten::mm with input dims [tokens_of_expert, hidden] that Kineto's record_shapes
shows), "grouped_mm" (the 5.x default when torch._grouped_mm can run) and "batched_mm" are fused
and show no per-expert shapes. This program asks for "eager" unless --experts-impl says otherwise
and records what it got.

Routers (the block's `gate.forward` is replaced; the expert computation is untouched):
  skewed  logits = x W^T, probs = softmax(logits.float() + bias_layer), top-k, renormalised
          (the stock router plus a per-layer bias; bias_layer = skew * z, z a fixed-seed normal
          vector over experts, so every layer prefers different experts, reproducibly);
  even    a real perfect router: the same x W^T and softmax are computed, then token t of the
          call gets experts (offset + t*k + j) mod E, j < k, with offset advancing by N*k per
          call, so every expert receives the same number of tokens (within one) in every step
          and exactly the same over a whole number of rotations; weights are the softmax
          probabilities of the chosen experts, renormalised (the same arithmetic as top-k).
  stock   the model's own router, untouched (random weights: close to even).

Counting: a forward pre-hook on each block's `experts` module reads the top_k_index it is given
and adds torch.bincount(top_k_index, minlength=E) to a GPU tensor [layers, experts] per measured
step (no host sync inside the step). The program's counts are written with --counts.

Steps: --mode decode (default): one prefill of --prompt tokens per sequence, --warmup decode steps,
then --steps measured decode steps of one token per sequence (batch --batch), each under
torch.profiler.record_function("decode_step") (a step name kernscope knows); --mode prefill: each
step is a forward of [batch, prompt] tokens without cache, under record_function("prefill").
Step time: CUDA events around each measured step; the median is reported. Profile with
--profile kineto OUT.json (record_shapes=True, with_stack=False, CPU + CUDA activities) around
the measured steps only; time without --profile for the figures that matter (the profiler costs).

Examples (on the GPU host):
  python3 hf_moe_router.py --router skewed --counts skew_counts.json
  python3 hf_moe_router.py --router skewed --profile kineto skew.json --counts skew_counts_prof.json
  python3 hf_moe_router.py --router even --counts even_counts.json
"""

import argparse
import json
import math
import statistics
import sys
import time


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["skewed", "even", "stock"], default="skewed")
    ap.add_argument("--skew", type=float, default=2.0, help="scale of the per-layer logit bias (skewed router)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=3584, help="expert intermediate size")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    ap.add_argument("--experts-impl", choices=["eager", "grouped_mm", "batched_mm", "default"], default="eager",
                    help="config._experts_implementation to ask for (eager: per-expert Linear loop)")
    ap.add_argument("--mode", choices=["decode", "prefill"], default="decode")
    ap.add_argument("--batch", type=int, default=16, help="sequences per step")
    ap.add_argument("--prompt", type=int, default=256, help="prompt tokens per sequence")
    ap.add_argument("--warmup", type=int, default=5, help="unmeasured steps first")
    ap.add_argument("--steps", type=int, default=20, help="measured steps")
    ap.add_argument("--profile", nargs=2, metavar=("KIND", "OUT"), help="kineto OUT.json: torch.profiler over the measured steps")
    ap.add_argument("--with-stack", action="store_true", help="profile with with_stack=True (python_function events)")
    ap.add_argument("--counts", metavar="OUT", help="write the program's own counts and timings as JSON")
    ap.add_argument("--no-step-annotations", action="store_true", help="no record_function around steps")
    args = ap.parse_args(argv)
    if args.profile and args.profile[0] != "kineto":
        ap.error("--profile supports only 'kineto'")
    if args.top_k > args.experts:
        ap.error("--top-k must not exceed --experts")
    return args


def build_model(args, torch):
    from transformers import MixtralConfig, MixtralForCausalLM

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    cfg = MixtralConfig(
        vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.ffn,
        num_hidden_layers=args.layers, num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
        num_local_experts=args.experts, num_experts_per_tok=args.top_k,
        max_position_embeddings=max(4096, args.prompt + args.warmup + args.steps + 8),
        router_jitter_noise=0.0, output_router_logits=False, use_cache=True)
    torch.manual_seed(args.seed)
    model = MixtralForCausalLM(cfg)
    got = getattr(model.config, "_experts_implementation", None)
    if args.experts_impl != "default":
        if hasattr(model, "set_experts_implementation"):
            model.set_experts_implementation(args.experts_impl)
        else:
            model.config._experts_implementation = args.experts_impl
        got = getattr(model.config, "_experts_implementation", args.experts_impl)
    model = model.to(device="cuda", dtype=dtype).eval()
    return model, cfg, got


def moe_blocks(model):
    """(layer index, block) for every MoE block, in forward order."""
    out = []
    for i, layer in enumerate(model.model.layers):
        block = getattr(layer, "mlp", None)
        if block is None:
            block = getattr(layer, "block_sparse_moe", None)  # transformers 4.x spelling
        if block is None or not hasattr(block, "gate") or not hasattr(block, "experts"):
            raise SystemExit("layer %d has no MoE block with .gate and .experts: transformers %s is not the "
                             "5.x layout this program expects" % (i, __import__("transformers").__version__))
        out.append((i, block))
    return out


class Routers:
    """Replacement forwards for each block's gate (router)."""

    def __init__(self, args, torch, blocks, experts, top_k):
        self.torch = torch
        self.mode = args.router
        self.E = experts
        self.k = top_k
        g = torch.Generator().manual_seed(args.seed + 1000)
        # bias_layer = skew * z_layer, z a standard normal vector per layer (fixed seed)
        self.bias = {i: (args.skew * torch.randn(experts, generator=g)).tolist() for i, _ in blocks}
        self.offset = {i: 0 for i, _ in blocks}
        self.bias_dev = {}
        self.scores_dtype = None

    def install(self, blocks):
        torch = self.torch
        for i, block in blocks:
            gate = block.gate
            if self.mode == "stock":
                continue
            weight = gate.weight
            self.bias_dev[i] = torch.tensor(self.bias[i], device=weight.device, dtype=torch.float32)
            gate.forward = self._make_forward(i, gate)

    def probe(self, blocks, hidden, device, dtype):
        """The stock router's return shape, so the replacement returns the same (3 values)."""
        torch = self.torch
        i, block = blocks[0]
        x = torch.randn(4, hidden, device=device, dtype=dtype)
        with torch.no_grad():
            out = type(block.gate).forward(block.gate, x)
        if not (isinstance(out, tuple) and len(out) == 3 and out[2].shape == (4, self.k)):
            raise SystemExit("the router (%s) returns %r, not (logits, top_k_weights, top_k_index): "
                             "adapt Routers to this transformers version" % (type(block.gate).__name__, type(out)))
        self.scores_dtype = out[1].dtype

    def _make_forward(self, layer, gate):
        torch = self.torch
        F = torch.nn.functional
        E, k = self.E, self.k
        routers = self

        def forward(hidden_states):
            h = hidden_states.reshape(-1, gate.weight.shape[1])
            logits = F.linear(h, gate.weight)                                  # (N, E), as the stock router
            if routers.mode == "skewed":
                probs = torch.softmax(logits.float() + routers.bias_dev[layer], dim=-1)
                top_w, top_i = torch.topk(probs, k, dim=-1)
            else:  # even: a real perfect router, round-robin over the experts
                probs = torch.softmax(logits.float(), dim=-1)
                torch.topk(probs, k, dim=-1)  # computed and dropped: the router's kernels stay the same
                n = h.shape[0]
                t = torch.arange(n, device=h.device).unsqueeze(1)
                j = torch.arange(k, device=h.device).unsqueeze(0)
                top_i = (routers.offset[layer] + t * k + j) % E
                routers.offset[layer] = (routers.offset[layer] + n * k) % E
                top_w = probs.gather(1, top_i)
            top_w = top_w / top_w.sum(dim=-1, keepdim=True)
            return logits, top_w.to(routers.scores_dtype or top_w.dtype), top_i

        return forward


class Counter:
    """Tokens per expert per layer, from the top_k_index each experts module receives."""

    def __init__(self, torch, blocks, experts, device):
        self.torch = torch
        self.E = experts
        self.layers = [i for i, _ in blocks]
        self.row = {i: r for r, i in enumerate(self.layers)}
        self.device = device
        self.current = None   # GPU tensor [layers, E] of the step being counted, or None
        self.steps = []       # one such tensor per measured step
        self.calls = []       # (layer, tokens) per call in the step, checked against the layer count
        for i, block in blocks:
            block.experts.register_forward_pre_hook(self._hook(i), with_kwargs=True)

    def _hook(self, layer):
        torch = self.torch

        def hook(module, args, kwargs):
            if self.current is None:
                return None
            idx = kwargs.get("top_k_index") if "top_k_index" in kwargs else (args[1] if len(args) > 1 else None)
            if idx is None:
                raise SystemExit("experts forward called without top_k_index: unexpected transformers layout")
            self.current[self.row[layer]] += torch.bincount(idx.reshape(-1).to(torch.int64), minlength=self.E)[: self.E]
            return None

        return hook

    def begin_step(self):
        self.current = self.torch.zeros(len(self.layers), self.E, dtype=self.torch.int64, device=self.device)

    def end_step(self):
        self.steps.append(self.current)
        self.current = None

    def result(self):
        per_step = [s.tolist() for s in self.steps]  # one host sync, after the measured steps
        layers = []
        for r, i in enumerate(self.layers):
            tokens = [sum(step[r][e] for step in per_step) for e in range(self.E)]
            mean = sum(tokens) / self.E
            layers.append({
                "layer": i,
                "experts": [{"expert": e, "tokens": tokens[e]} for e in range(self.E)],
                "imbalance": (max(tokens) / mean) if mean else None,
                "per_step": [step[r] for step in per_step],
                "experts_hit_per_step": [sorted(e for e in range(self.E) if step[r][e] > 0) for step in per_step],
            })
        return layers


def main(argv=None):
    args = parse_args(argv)
    import torch
    import transformers

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU")
    model, cfg, impl = build_model(args, torch)
    device = torch.device("cuda")
    dtype = next(model.parameters()).dtype
    blocks = moe_blocks(model)
    routers = Routers(args, torch, blocks, args.experts, args.top_k)
    routers.probe(blocks, args.hidden, device, dtype)
    routers.install(blocks)
    counter = Counter(torch, blocks, args.experts, device)
    annotate = not args.no_step_annotations
    step_name = "decode_step" if args.mode == "decode" else "prefill"

    gen = torch.Generator(device="cuda").manual_seed(args.seed + 7)
    prompt_ids = torch.randint(0, args.vocab, (args.batch, args.prompt), device=device, generator=gen)

    from transformers.cache_utils import DynamicCache

    state = {}

    def prefill_cache():
        cache = DynamicCache()
        with torch.no_grad():
            out = model(input_ids=prompt_ids, past_key_values=cache, use_cache=True)
        state["cache"] = cache
        state["next"] = out.logits[:, -1:].argmax(-1)

    def one_step():
        with torch.no_grad():
            if args.mode == "decode":
                out = model(input_ids=state["next"], past_key_values=state["cache"], use_cache=True)
                state["next"] = out.logits[:, -1:].argmax(-1)
            else:
                model(input_ids=prompt_ids, use_cache=False)

    if args.mode == "decode":
        prefill_cache()
    for _ in range(args.warmup):
        one_step()
    torch.cuda.synchronize()

    prof = None
    if args.profile:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        prof = torch.profiler.profile(activities=acts, record_shapes=True, with_stack=args.with_stack)
        prof.__enter__()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
    wall0 = time.perf_counter()
    for s in range(args.steps):
        counter.begin_step()
        starts[s].record()
        if annotate:
            with torch.profiler.record_function(step_name):
                one_step()
        else:
            one_step()
        ends[s].record()
        counter.end_step()
    torch.cuda.synchronize()
    wall = time.perf_counter() - wall0
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(args.profile[1])
    step_ms = [a.elapsed_time(b) for a, b in zip(starts, ends)]
    layers = counter.result()

    tokens_per_step = args.batch * (1 if args.mode == "decode" else args.prompt)
    result = {
        "program": "bench/gpu/moe/hf_moe_router.py",
        "argv": sys.argv[1:] if argv is None else list(argv),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "device": torch.cuda.get_device_name(),
        "model": {"arch": type(model).__name__, "layers": args.layers, "experts": args.experts, "top_k": args.top_k,
                  "hidden": args.hidden, "ffn": args.ffn, "dtype": str(dtype),
                  "experts_implementation": impl, "router_module": type(blocks[0][1].gate).__name__,
                  "experts_module": type(blocks[0][1].experts).__name__},
        "router": {"mode": args.router, "skew": args.skew, "seed": args.seed,
                   "bias_per_layer": {str(i): routers.bias[i] for i, _ in blocks} if args.router == "skewed" else None},
        "steps": {"mode": args.mode, "name": step_name if annotate else None, "batch": args.batch,
                  "prompt": args.prompt, "warmup": args.warmup, "measured": args.steps,
                  "tokens_per_step": tokens_per_step, "routed_assignments_per_layer_step": tokens_per_step * args.top_k},
        "timing": {"step_ms": step_ms, "median_step_ms": statistics.median(step_ms),
                   "wall_s": wall, "under_profiler": prof is not None},
        "layers": layers,
    }
    # sanity: every layer got tokens_per_step * top_k assignments in every step
    for L in layers:
        for s, row in enumerate(L["per_step"]):
            if sum(row) != tokens_per_step * args.top_k:
                raise SystemExit("layer %d step %d: %d assignments, expected %d"
                                 % (L["layer"], s, sum(row), tokens_per_step * args.top_k))
    if args.counts:
        with open(args.counts, "w") as f:
            json.dump(result, f, indent=1)
    print("router=%s impl=%s mode=%s batch=%d median step %.3f ms over %d steps%s"
          % (args.router, impl, args.mode, args.batch, result["timing"]["median_step_ms"], args.steps,
             " (under profiler)" if prof is not None else ""))
    for L in layers:
        toks = [e["tokens"] for e in L["experts"]]
        print("  layer %d tokens per expert %s imbalance %.3f" % (L["layer"], toks, L["imbalance"] or math.nan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
