"""`kernscope moe` against an independent reading of the raw traces (tests/realworld/moe_truth.py:
Python's json, its own name patterns, Kineto's `dur`), issue 31:
  - on the MoE traces (the vLLM gpt-oss fixture; DeepSeek-V3's training step from ../shared, read in
    place, when present): each role's kernel count equal, its time equal to the microsecond sums
    (Kineto `dur` is in us with 3 decimals: within 1 ns per kernel), the router invocations equal to
    the layers found, dispatch/combine time equal;
  - on every other trace of tests/fixtures (and the shared traces without MoE): no MoE finding, from
    `moe` and in `report`.
usage: moe_vs_truth.py KERNSCOPE FIXTURES_DIR [SHARED_DIR]"""
import glob, json, os, subprocess, sys

K, FIX = sys.argv[1], sys.argv[2]
SHARED = sys.argv[3] if len(sys.argv) > 3 else ""
HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0


def check(ok, text):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + text, flush=True)


def moe(trace):
    p = subprocess.run([K, "moe", "--format", "json", trace], capture_output=True, text=True, timeout=600)
    if p.returncode not in (0, 2):
        check(False, f"{os.path.basename(trace)}: kernscope moe crashed (exit {p.returncode}): {p.stderr.strip()[:200]}")
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), p.stderr


traces = [os.path.join(FIX, "kineto", "tracelens__traces__inference__vllm_prefilldecode_piecewise__graph_execution.json.xz")]
deepseek = os.path.join(SHARED, "deepseek_profile_data__train.json.gz") if SHARED else ""
if deepseek and os.path.exists(deepseek):
    traces.append(deepseek)
else:
    print("note: the shared DeepSeek trace is not here; only the fixture is compared")
sys.path.insert(0, HERE)
import moe_truth  # noqa: E402  (its loader and name patterns; nothing of kernscope's)


def exposed_dispatch_combine_ns(path):
    """Dispatch/combine time with no other kernel running on the same GPU (Kineto pid = device),
    NCCL's kernels not counted as compute: interval arithmetic over the raw events, in ns."""
    by_device = {}
    for e in moe_truth.load_kineto(path):
        if not moe_truth.is_kernel(e):
            continue
        start = round(float(e["ts"]) * 1000)
        end = start + round(float(e.get("dur", 0) or 0) * 1000)
        dc, compute = by_device.setdefault((e.get("pid"), (e.get("args") or {}).get("device")), ([], []))
        if moe_truth.classify(e.get("name", "")) == "dispatch_combine":
            dc.append((start, end))
        elif not e.get("name", "").lower().startswith("nccl"):
            compute.append((start, end))
    total = 0
    for dc, compute in by_device.values():
        points = sorted({p for iv in dc + compute for p in iv})
        for a, b in zip(points, points[1:]):
            in_dc = any(s <= a and b <= e for s, e in dc)
            if in_dc and not any(s <= a and b <= e for s, e in compute):
                total += b - a
    return total


truth = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "moe_truth.py"), "--json", *traces],
                                  capture_output=True, text=True, check=True).stdout)["traces"]
for t, want in zip(traces, truth):
    name = os.path.basename(t)
    got, err = moe(t)
    if got is None:
        check(False, f"{name}: kernscope moe failed: {err}")
        continue
    check(got["present"], f"{name}: MoE layers found ({got['evidence']})")
    roles = {r["role"]: r for r in got["roles"]}
    for group, role in [("expert_gemm", "expert_gemm"), ("router", "router"), ("permute", "permute"),
                        ("dispatch_combine", "dispatch_combine"), ("moe_other", "other")]:
        w = want["groups"][group]
        g = roles.get(role, {"kernels": 0, "time_ns": 0})
        close = abs(g["time_ns"] - w["dur_us"] * 1000) <= max(1, w["count"])
        check(g["kernels"] == w["count"] and close,
              f"{name}: {role}: {g['kernels']} kernels, {g['time_ns']} ns; truth {w['count']} kernels, {w['dur_us']} us")
    # One router kernel per layer in these traces: layer invocations equal router invocations.
    check(sum(l["invocations"] for l in got["layers"]) == want["router_invocations"],
          f"{name}: {sum(l['invocations'] for l in got['layers'])} layer invocations in {len(got['layers'])} layers; truth {want['router_invocations']} router invocations")
    want_exposed = exposed_dispatch_combine_ns(t)
    got_exposed = got["dispatch_combine"]["exposed_ns"]
    check(abs(got_exposed - want_exposed) <= max(1000, want_exposed // 1000),
          f"{name}: exposed dispatch/combine {got_exposed} ns; independent {want_exposed} ns")
    check(all(not l["experts"] and l["imbalance"] is None for l in got["layers"]) and "not in this trace" in got["tokens_per_expert"],
          f"{name}: no tokens per expert claimed (the trace has none): {got['tokens_per_expert'][:80]}...")

# An eager per-expert loop (Hugging Face Mixtral, router skewed on purpose, H100): tokens per expert
# and imbalance per layer equal what the program itself counted during the traced steps.
eager_dir = os.path.join(FIX, "moe", "hf_mixtral_skewed_h100")
eager_trace = os.path.join(eager_dir, "trace.json.xz")
counted = json.load(open(os.path.join(eager_dir, "counts.json")))
got, err = moe(eager_trace)
if got is None:
    check(False, f"hf_mixtral_skewed_h100: kernscope moe failed: {err}")
else:
    want_layers = counted["layers"]
    check(len(got["layers"]) == len(want_layers), f"hf_mixtral_skewed_h100: {len(got['layers'])} layers; the program has {len(want_layers)}")
    for g, w in zip(got["layers"], want_layers):
        tokens = [e["tokens"] for e in g["experts"]]
        want = [e["tokens"] for e in w["experts"]]
        check(tokens == want and abs(g["imbalance"] - w["imbalance"]) < 1e-9 and g["invocations"] == counted["steps"]["measured"],
              f"hf_mixtral_skewed_h100 layer {g['layer']}: tokens per expert {tokens}, imbalance {g['imbalance']:.3f}, "
              f"{g['invocations']} invocations; the program counted {want}, {w['imbalance']:.3f}, {counted['steps']['measured']} steps")
    # Per step (the csv): each step's tokens per expert per layer equal the program's per-step counts.
    rows = subprocess.run([K, "moe", "--format", "csv", eager_trace], capture_output=True, text=True, timeout=600).stdout.splitlines()
    header = rows[0].split(",")
    per = {}
    for line in rows[1:]:
        r = dict(zip(header, line.split(",")))
        per.setdefault((int(r["Step"]), int(r["Layer"])), {})[int(r["Expert"])] = int(r["Tokens"])
    step_ids = sorted({s for s, _ in per})
    for w in want_layers:
        got_steps = [[per.get((s, w["layer"]), {}).get(e, None) for e in range(len(w["experts"]))] for s in step_ids]
        check(got_steps == w["per_step"], f"hf_mixtral_skewed_h100 layer {w['layer']}: tokens per expert in each of {len(step_ids)} steps "
              f"(csv) equal the program's per-step counts" + ("" if got_steps == w["per_step"] else f": {got_steps[:2]} vs {w['per_step'][:2]}"))
    # The perfect-router estimate against a real perfect router: the same model run with routing
    # forced even (bench/gpu/moe/hf_moe_router.py --router even), untraced, interleaved with the
    # skewed router (bench/gpu/moe/results_h100_2026-11-28.tsv; bench/RESULTS.md, "Issue 31 on an
    # H100"). The estimate is made from the skewed trace alone.
    pr = got["perfect_router"]
    results = os.path.join(HERE, "..", "..", "bench", "gpu", "moe", "results_h100_2026-11-28.tsv")
    rounds = {}
    for line in open(results):
        if line.startswith("#") or line.startswith("round"):
            continue
        f = line.rstrip("\n").split("\t")
        rounds.setdefault(int(f[0]), {})[f[2]] = float(f[3])
    def median(v):
        v = sorted(v)
        return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2
    even = [r["even"] for r in rounds.values()]
    skewed = [r["skewed"] for r in rounds.values()]
    same_round = [r["even"] / r["skewed"] for r in rounds.values()]
    check(pr["estimated"], f"hf_mixtral_skewed_h100: perfect router estimated ({pr.get('why_not', '')})")
    if pr["estimated"]:
        # The estimate predicts the traced program's step with even routing; two comparisons with the
        # real even router, untraced: the step time itself, and the change it makes (the estimate's
        # ratio against the same-round ratio of the measured runs, which cancels the host's drift).
        predicted_ms = pr["predicted_step_ns"] / 1e6
        error = predicted_ms / median(even) - 1
        check(abs(error) <= 0.15, f"hf_mixtral_skewed_h100: predicted step with a perfect router {predicted_ms:.2f} ms against "
              f"{median(even):.2f} ms measured with routing forced even (median of {len(even)} untraced runs): "
              f"error {error * 100:+.1f} % (issue 31 asks <= 15 %)")
        # From the program's own counts, not the runs' noisy clock: the skewed router hits fewer
        # experts per layer invocation than even routing would (min(E, assignments)), and the
        # eager loop pays per expert it runs, so the estimate must add at least half of the added
        # iterations' host time to each step ("no change" would pass the checks around it).
        experts = counted["model"]["experts"]
        per_invocation = [sum(1 for t in step if t > 0) for w in want_layers for step in w["per_step"]]
        hit = sum(per_invocation) / len(per_invocation)
        even_hits = min(experts, counted["steps"]["routed_assignments_per_layer_step"])
        check(abs(pr["model"]["experts_hit"] - hit) < 0.05 and pr["model"]["experts_even"] == even_hits,
              f"hf_mixtral_skewed_h100: experts run per layer invocation {pr['model']['experts_hit']} traced, "
              f"{pr['model']['experts_even']} with even routing; the program's counts give {hit:.2f} and {even_hits}")
        added_ms = (even_hits - hit) * len(want_layers) * pr["model"]["host_per_iteration_ns"] / 1e6
        change_ms = (pr["predicted_step_ns"] - pr["step_ns"]) / 1e6
        check(change_ms >= 0.5 * added_ms, f"hf_mixtral_skewed_h100: the estimate adds {change_ms:.2f} ms a step; the "
              f"{(even_hits - hit) * len(want_layers):.1f} iterations even routing adds in the {len(want_layers)} layers cost "
              f"{added_ms:.2f} ms of host time (half of it at least)")
        predicted_ratio = pr["predicted_step_ns"] / pr["step_ns"]
        ratio_error = predicted_ratio / median(same_round) - 1
        check(abs(ratio_error) <= 0.15 and min(same_round) <= predicted_ratio <= max(same_round),
              f"hf_mixtral_skewed_h100: predicted even/skewed {predicted_ratio:.3f} against the measured same-round ratio "
              f"{median(same_round):.3f} (range {min(same_round):.3f}-{max(same_round):.3f}; ratio of medians "
              f"{median(even) / median(skewed):.3f}): error {ratio_error * 100:+.1f} %")
traces.append(eager_trace)

# Hugging Face generate() of a Mixtral-config model (tests/fixtures/hf_generate: the program's config
# says 4 local experts, top-2, in each of its 2 layers), traced by kernscope record, nsys and
# torch.profiler: MoE is found in each (its dense Llama siblings are among the others below).
for p in sorted(glob.glob(os.path.join(FIX, "hf_generate", "moe_*.xz"))):
    truth = json.load(open(p.split(".")[0] + ".truth.json"))
    check(truth["config"]["model_type"] == "mixtral", f"{os.path.basename(p)}: the truth is a Mixtral config")
    got, err = moe(p)
    check(got is not None and got["present"], f"hf_generate/{os.path.basename(p)}: MoE found ({got and got['evidence']}{err and ' ' + err})")
    traces.append(p)

# No MoE anywhere else: every fixture trace and the shared traces without MoE.
others = [p for p in glob.glob(os.path.join(FIX, "**", "*"), recursive=True)
          if p.endswith((".sqlite.xz", ".json.xz", ".sqlite", ".json.gz", ".pt.trace.json")) and os.path.basename(p) not in map(os.path.basename, traces)
          and "/gold/" not in p]  # nsys's report outputs, not traces
if SHARED and os.path.isdir(SHARED):
    others += [p for p in glob.glob(os.path.join(SHARED, "*")) if p.endswith((".gz", ".xz")) and os.path.basename(p) not in map(os.path.basename, traces)
               and "vllm_prefilldecode_piecewise" not in p]
said = 0
for p in sorted(others):
    got, err = moe(p)
    if got is None:
        continue  # not a trace kernscope reads (a side file): refused with exit 2, checked above not to crash
    said += 1
    if got["present"]:
        check(False, f"{os.path.relpath(p, FIX) if p.startswith(FIX) else os.path.basename(p)}: MoE claimed: {got['evidence']}")
check(said > 20, f"no MoE claimed on {said} other traces")
sys.exit(1 if failures else 0)
