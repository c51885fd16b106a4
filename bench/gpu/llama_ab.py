# The eager Llama decode of ../shared/tools/llama_decode_workload.py (same model, batch 1), measured
# untraced and traced in one process: pairs of short blocks of decode steps, one block of each pair
# traced, the order alternating (untraced first in even pairs, traced first in odd ones) so that a
# drift of the shared host falls on both kinds alike. Each traced block runs between
# torch.cuda.profiler.start() and stop() (cudaProfilerStart/Stop); run it under
#   kernscope record --capture-range=cudaProfilerApi --capture-range-end=repeat -- python3 llama_ab.py
# (or nsys with the same capture range) and the tracer records only the traced blocks; without a
# tracer both kinds of block run alike (the A/B control). PEER=torch traces the traced blocks with
# torch.profiler (CPU + CUDA activities) instead.
#
# Prints the TPOT of each kind, the median of the pairwise ratios traced/untraced with its 95 %
# bootstrap interval, and the same comparison for the low (10th) percentile of single steps (see
# summary()). Environment: PROMPT (512), STEPS per block (12), PAIRS (30), NVTX=1 to put an
# NVTX range around each step (as the workload does), PEER=torch. ATTACH_AB=1, run with
# bench/gpu/cupti_floor.cpp injected (CUDA_INJECTION64_PATH=libcupti_floor.so CUPTI_FLOOR_AB=1 and the
# floor's paused state): the "traced" blocks run with CUPTI attached in that state, the others with
# CUPTI detached (cuptiFinalize), so what an attached, paused CUPTI costs is measured in one process.
import os, random, statistics, time, torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
prompt = int(os.environ.get("PROMPT", 512))
steps = int(os.environ.get("STEPS", 12))
pairs = int(os.environ.get("PAIRS", 30))
use_nvtx = os.environ.get("NVTX", "1") == "1"
peer = os.environ.get("PEER", "")
model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
ids = torch.randint(0, cfg.vocab_size, (1, prompt), device="cuda")


attach_ab = None
if os.environ.get("ATTACH_AB") == "1":
    import ctypes
    attach_ab = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"], mode=os.RTLD_NOLOAD | os.RTLD_NOW).cupti_floor_attach


class ProfilerRange:
    """cudaProfilerStart/Stop around a traced block, or torch.profiler with PEER=torch."""

    def __enter__(self):
        if peer == "torch":
            acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            self.prof = torch.profiler.profile(activities=acts)
            self.prof.__enter__()
        else:
            torch.cuda.profiler.start()

    def __exit__(self, *exc):
        if peer == "torch":
            self.prof.__exit__(*exc)
            self.events = len(self.prof.events())  # the profiler's own processing, after the timing
        else:
            torch.cuda.profiler.stop()


def block(traced):
    """TPOT of one block of decode steps and the host time of each step, in ms."""
    cache = DynamicCache()
    o = model(input_ids=ids, past_key_values=cache, use_cache=True)
    nxt = o.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()
    if attach_ab is not None and attach_ab(1 if traced else 0) != 0:
        raise SystemExit("cupti_floor_attach failed")
    scope = ProfilerRange() if traced and attach_ab is None else None
    if scope:
        scope.__enter__()
    t0 = time.perf_counter()
    stamps = [t0]
    for _ in range(steps):
        if use_nvtx:
            torch.cuda.nvtx.range_push("decode_step")
        o = model(input_ids=nxt, past_key_values=o.past_key_values, use_cache=True)
        nxt = o.logits[:, -1:].argmax(-1)
        if use_nvtx:
            torch.cuda.nvtx.range_pop()
        stamps.append(time.perf_counter())
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    if scope:
        scope.__exit__(None, None, None)
    return (t1 - t0) * 1e3 / steps, [(b - a) * 1e3 for a, b in zip(stamps, stamps[1:])]


def summary(plain, traced):
    """TPOT: the median of the pairwise block ratios, with a 95 % bootstrap interval over pairs.
    Step floor: the 10th percentile of the single steps' host times (the launch-bound loop runs
    ahead of the GPU, so a step's host time is its launch time), traced vs untraced, with a
    bootstrap interval over pairs. A busy neighbour only ever adds time, and its bursts land on
    few steps; the tracer's cost is on every step, so the low percentile keeps the tracer's cost and
    sheds most of the host's noise."""
    rng = random.Random(1)
    pct = lambda r: 100 * (r - 1)
    ratios = [t[0] / p[0] for p, t in zip(plain, traced)]
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
    p10 = lambda blocks: statistics.quantiles([s for b in blocks for s in b[1]], n=10)[0]
    floor = p10(traced) / p10(plain)
    idx = list(range(len(plain)))
    fboot = []
    for _ in range(500):
        pick = rng.choices(idx, k=len(idx))
        fboot.append(p10([traced[i] for i in pick]) / p10([plain[i] for i in pick]))
    fboot.sort()
    flo, fhi = fboot[int(0.025 * len(fboot))], fboot[int(0.975 * len(fboot)) - 1]
    return (f"TPOT: untraced={statistics.median(p[0] for p in plain):.3f}ms "
            f"traced={statistics.median(t[0] for t in traced):.3f}ms pairwise_median={pct(statistics.median(ratios)):+.2f}% "
            f"ci95={pct(lo):+.2f}..{pct(hi):+.2f}% | step_p10: untraced={p10(plain):.3f}ms traced={p10(traced):.3f}ms "
            f"ratio={pct(floor):+.2f}% ci95={pct(flo):+.2f}..{pct(fhi):+.2f}%")


with torch.inference_mode():
    block(False)  # warm-up, untraced
    block(True)   # warm-up, traced: the tracer's first range sets itself up
    plain, traced = [], []
    for i in range(pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        for kind in order:
            (traced if kind else plain).append(block(kind))
print(f"{summary(plain, traced)} | pairs={pairs} steps={steps}", flush=True)
