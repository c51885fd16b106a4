#!/usr/bin/env python3
"""Hugging Face assisted generation (speculative decoding with a draft model) on random-init
Llama models built from configs (never downloaded), counting the tokens proposed and accepted in
every verify step itself. Issue 31's GPU check: kernscope's proposed/accepted figures from the
trace must equal this program's.

Written for PyTorch 2.11 (cu130) and transformers 5.17. In transformers, `generate(...,
assistant_model=draft)` runs `_assisted_decoding` (generation/utils.py): each iteration asks the
candidate generator (`AssistedCandidateGenerator.get_candidates(input_ids, ...)`, which runs the
draft model up to `num_assistant_tokens` times) for candidate tokens, verifies them with one
forward of the target over candidate_length + 1 positions, takes the longest matching prefix
(`n_matches`), and calls `candidate_generator.update_candidate_strategy(input_ids, scores,
n_matches)`. This program wraps the two calls on the generator that generate() builds:
  proposed = candidate_ids.shape[-1] - input_ids.shape[-1]   (from get_candidates)
  accepted = int(num_matches)                                 (from update_candidate_strategy)
  emitted  = accepted + 1                                     (the target's own next token)
and counts the draft's forwards per iteration with a forward pre-hook on the draft model. CUDA
events at get_candidates' entry and exit and at update_candidate_strategy's entry split each
iteration into draft time and verify time.

Tokenizer-free: input_ids are random token ids fed directly; both models share the vocabulary.
Drafts (--draft):
  truncated  the target's first --draft-layers decoder layers, embedding, final norm and LM head
             copied into a smaller Llama of the same width: proposals agree with the target often
             enough to exercise acceptance (random weights make the exact rate unpredictable: the
             program counts it);
  small      an independent smaller Llama (--draft-hidden wide): acceptance near zero.
Greedy (do_sample=False), num_assistant_tokens_schedule="constant", assistant_confidence_threshold
0 (the draft always proposes --num-assistant-tokens, unless the length limit cuts it), no EOS.

Also measured (unless --no-baseline): plain greedy decode of the target alone for the same number
of new tokens, the median time per token, for "time per accepted token against plain decode".

Steps for kernscope: each generate() call is wrapped in record_function("generate"); with
--annotate, each iteration's draft and verify are wrapped in record_function("assisted:draft")
and ("assisted:verify") (labels of this program, not of transformers: off by default so the
trace looks like a user's). Profile: --profile kineto OUT.json (record_shapes=True,
with_stack=False unless --with-stack; with_stack=True adds python_function events such as
_assisted_decoding and get_candidates).

Example (on the GPU host):
  python3 hf_assisted.py --counts assisted_counts.json
  python3 hf_assisted.py --profile kineto assisted.json --counts assisted_counts_prof.json
"""

import argparse
import json
import statistics
import sys
import time


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--ffn", type=int, default=5632)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--draft", choices=["truncated", "small"], default="truncated")
    ap.add_argument("--draft-layers", type=int, default=2)
    ap.add_argument("--draft-hidden", type=int, default=512, help="width of the 'small' draft")
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--num-assistant-tokens", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1, help="unmeasured generate() calls first")
    ap.add_argument("--repeats", type=int, default=3, help="measured generate() calls (distinct prompts)")
    ap.add_argument("--annotate", action="store_true", help="record_function around each draft and verify")
    ap.add_argument("--profile", nargs=2, metavar=("KIND", "OUT"))
    ap.add_argument("--with-stack", action="store_true")
    ap.add_argument("--counts", metavar="OUT")
    ap.add_argument("--no-baseline", action="store_true", help="skip the plain-decode baseline")
    args = ap.parse_args(argv)
    if args.profile and args.profile[0] != "kineto":
        ap.error("--profile supports only 'kineto'")
    return args


def build(args, torch):
    from transformers import LlamaConfig, LlamaForCausalLM

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    common = dict(vocab_size=args.vocab, max_position_embeddings=4096, tie_word_embeddings=False,
                  bos_token_id=None, eos_token_id=None, pad_token_id=0)
    tcfg = LlamaConfig(hidden_size=args.hidden, intermediate_size=args.ffn, num_hidden_layers=args.layers,
                       num_attention_heads=args.heads, num_key_value_heads=args.kv_heads, **common)
    torch.manual_seed(args.seed)
    target = LlamaForCausalLM(tcfg)
    if args.draft == "truncated":
        dcfg = LlamaConfig(hidden_size=args.hidden, intermediate_size=args.ffn, num_hidden_layers=args.draft_layers,
                           num_attention_heads=args.heads, num_key_value_heads=args.kv_heads, **common)
        draft = LlamaForCausalLM(dcfg)
        sd = {k: v for k, v in target.state_dict().items()
              if not k.startswith("model.layers.") or int(k.split(".")[2]) < args.draft_layers}
        missing, unexpected = draft.load_state_dict(sd, strict=False)
        missing = [m for m in missing if "rotary" not in m]
        if missing or unexpected:
            raise SystemExit("truncated draft: missing %s unexpected %s" % (missing, unexpected))
    else:
        heads = max(1, args.draft_hidden // 64)
        dcfg = LlamaConfig(hidden_size=args.draft_hidden, intermediate_size=4 * args.draft_hidden,
                           num_hidden_layers=args.draft_layers, num_attention_heads=heads,
                           num_key_value_heads=heads, **common)
        draft = LlamaForCausalLM(dcfg)
    target = target.to(device="cuda", dtype=dtype).eval()
    draft = draft.to(device="cuda", dtype=dtype).eval()
    return target, draft, tcfg, dcfg


class Tally:
    """Proposed/accepted per verify step, from the candidate generator generate() builds."""

    def __init__(self, torch, draft, annotate):
        self.torch = torch
        self.annotate = annotate
        self.active = False
        self.iterations = []  # dicts, one per verify step of a measured call
        self.cur = None
        self.call = -1
        self.draft_forwards = 0
        self.draft_positions = 0
        draft.register_forward_pre_hook(self._draft_hook, with_kwargs=True)
        self._scope = None

    def _draft_hook(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.draft_forwards += 1
        if ids is not None:
            self.draft_positions += int(ids.shape[-1])
        return None

    def _open(self, name):
        if self.annotate:
            self._scope = self.torch.profiler.record_function(name)
            self._scope.__enter__()

    def _close(self):
        if self._scope is not None:
            self._scope.__exit__(None, None, None)
            self._scope = None

    def wrap(self, gen):
        torch = self.torch
        get_candidates = gen.get_candidates
        update = gen.update_candidate_strategy
        tally = self

        def wrapped_get_candidates(*args, **kwargs):
            input_ids = kwargs.get("input_ids", args[0] if args else None)
            ev0 = torch.cuda.Event(enable_timing=True)
            ev1 = torch.cuda.Event(enable_timing=True)
            f0, p0 = tally.draft_forwards, tally.draft_positions
            ev0.record()
            tally._open("assisted:draft")
            out = get_candidates(*args, **kwargs)
            tally._close()
            ev1.record()
            cand = out[0] if isinstance(out, tuple) else out
            tally.cur = {"call": tally.call, "input_len": int(input_ids.shape[-1]),
                         "proposed": int(cand.shape[-1] - input_ids.shape[-1]),
                         "draft_forwards": tally.draft_forwards - f0,
                         "draft_positions": tally.draft_positions - p0, "_ev": [ev0, ev1]}
            tally._open("assisted:verify")
            return out

        def wrapped_update(input_ids, scores, num_matches, *args, **kwargs):
            tally._close()
            ev2 = torch.cuda.Event(enable_timing=True)
            ev2.record()
            if tally.cur is not None:
                tally.cur["accepted"] = int(num_matches)
                tally.cur["emitted"] = int(num_matches) + 1
                tally.cur["_ev"].append(ev2)
                if tally.active:
                    tally.iterations.append(tally.cur)
                tally.cur = None
            return update(input_ids, scores, num_matches, *args, **kwargs)

        gen.get_candidates = wrapped_get_candidates
        gen.update_candidate_strategy = wrapped_update
        return gen

    def finish(self):
        self.torch.cuda.synchronize()
        for it in self.iterations:
            ev = it.pop("_ev")
            it["draft_ms"] = ev[0].elapsed_time(ev[1])
            it["verify_ms"] = ev[1].elapsed_time(ev[2]) if len(ev) > 2 else None
        return self.iterations


def install(torch, tally):
    """Wrap the candidate generator that generate() builds (instance level, any generator class)."""
    from transformers.generation.utils import GenerationMixin

    if hasattr(GenerationMixin, "_get_candidate_generator"):
        original = GenerationMixin._get_candidate_generator

        def patched(self, *args, **kwargs):
            return tally.wrap(original(self, *args, **kwargs))

        GenerationMixin._get_candidate_generator = patched
        return "GenerationMixin._get_candidate_generator"
    from transformers.generation import candidate_generator as cg  # fallback: class level

    cls = cg.AssistedCandidateGenerator
    orig_init = cls.__init__

    def init(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        tally.wrap(self)

    cls.__init__ = init
    return "AssistedCandidateGenerator.__init__"


def main(argv=None):
    args = parse_args(argv)
    import torch
    import transformers

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU")
    target, draft, tcfg, dcfg = build(args, torch)
    # AssistedCandidateGenerator reads num_assistant_tokens, its schedule and the confidence
    # threshold from the DRAFT's generation_config (defaults 20, "constant", 0.4), not from
    # generate()'s kwargs: with the default 0.4 a random-weight draft stops after one token.
    dgc = draft.generation_config
    dgc.num_assistant_tokens = args.num_assistant_tokens
    dgc.num_assistant_tokens_schedule = "constant"
    dgc.assistant_confidence_threshold = 0.0
    tally = Tally(torch, draft, args.annotate)
    hooked = install(torch, tally)
    gen = torch.Generator(device="cuda").manual_seed(args.seed + 11)
    prompts = [torch.randint(1, args.vocab, (1, args.prompt), device="cuda", generator=gen)
               for _ in range(args.warmup + args.repeats)]
    gkw = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False,
               num_assistant_tokens=args.num_assistant_tokens, num_assistant_tokens_schedule="constant",
               assistant_confidence_threshold=0.0, eos_token_id=None, pad_token_id=0)

    def run(prompt):
        with torch.no_grad(), torch.profiler.record_function("generate"):
            return target.generate(prompt, attention_mask=torch.ones_like(prompt), assistant_model=draft, **gkw)

    for p in prompts[: args.warmup]:
        run(p)
    torch.cuda.synchronize()

    prof = None
    if args.profile:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        prof = torch.profiler.profile(activities=acts, record_shapes=True, with_stack=args.with_stack)
        prof.__enter__()
    tally.active = True
    call_ms = []
    new_tokens = []
    for c, p in enumerate(prompts[args.warmup:]):
        tally.call = c
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        out = run(p)
        e1.record()
        torch.cuda.synchronize()
        call_ms.append(e0.elapsed_time(e1))
        new_tokens.append(int(out.shape[-1] - p.shape[-1]))
    tally.active = False
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(args.profile[1])
    iterations = tally.finish()

    baseline = None
    if not args.no_baseline:
        from transformers.cache_utils import DynamicCache

        p = prompts[-1]
        times = []
        with torch.no_grad():
            cache = DynamicCache()
            o = target(input_ids=p, past_key_values=cache, use_cache=True)
            nxt = o.logits[:, -1:].argmax(-1)
            evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(args.new_tokens)]
            for a, b in evs:
                a.record()
                o = target(input_ids=nxt, past_key_values=cache, use_cache=True)
                nxt = o.logits[:, -1:].argmax(-1)
                b.record()
            torch.cuda.synchronize()
            times = [a.elapsed_time(b) for a, b in evs]
        baseline = {"plain_decode_step_ms": times, "median_ms": statistics.median(times[2:] or times)}

    proposed = sum(i["proposed"] for i in iterations)
    accepted = sum(i["accepted"] for i in iterations)
    emitted = sum(i["emitted"] for i in iterations)
    result = {
        "program": "bench/gpu/spec/hf_assisted.py",
        "argv": sys.argv[1:] if argv is None else list(argv),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "device": torch.cuda.get_device_name(), "hooked": hooked,
        "target": {"layers": tcfg.num_hidden_layers, "hidden": tcfg.hidden_size},
        "draft": {"kind": args.draft, "layers": dcfg.num_hidden_layers, "hidden": dcfg.hidden_size},
        "generation": {k: v for k, v in gkw.items()} | {"prompt": args.prompt, "measured_calls": args.repeats},
        "draft_generation_config": {k: getattr(dgc, k, None) for k in
                                    ("num_assistant_tokens", "num_assistant_tokens_schedule",
                                     "assistant_confidence_threshold")},
        "calls": [{"call": c, "ms": call_ms[c], "new_tokens": new_tokens[c],
                   "verify_steps": sum(1 for i in iterations if i["call"] == c)} for c in range(len(call_ms))],
        "verify_steps": iterations,
        "totals": {"verify_steps": len(iterations), "proposed": proposed, "accepted": accepted, "emitted": emitted,
                   "acceptance_rate": accepted / proposed if proposed else None,
                   "mean_accepted_per_verify": accepted / len(iterations) if iterations else None,
                   "ms_per_emitted_token": sum(call_ms) / emitted if emitted else None,
                   "median_verify_ms": statistics.median([i["verify_ms"] for i in iterations if i["verify_ms"] is not None])
                   if iterations else None},
        "baseline": baseline,
        "under_profiler": prof is not None,
    }
    # generate() emits prefill's first token itself, the rest through verify steps (emitted may be
    # cut at max_new_tokens: the last verify step's tokens past the limit are dropped)
    if args.counts:
        with open(args.counts, "w") as f:
            json.dump(result, f, indent=1)
    t = result["totals"]
    print("verify steps %d proposed %d accepted %d (rate %s) emitted %d; %.3f ms per emitted token%s"
          % (t["verify_steps"], proposed, accepted,
             "%.3f" % t["acceptance_rate"] if t["acceptance_rate"] is not None else "-", emitted,
             t["ms_per_emitted_token"] or float("nan"), "" if baseline is None else
             "; plain decode %.3f ms per token" % baseline["median_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
