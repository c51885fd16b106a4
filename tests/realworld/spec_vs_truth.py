"""`kernscope spec` against what the programs counted and an independent reading of the raw traces
(issue 31, item 3):
  - Hugging Face assisted generation on an H100 (tests/fixtures/spec/hf_assisted_truncated_h100,
    counts.json written by bench/gpu/spec/hf_assisted.py itself): tokens proposed, accepted and
    emitted per verify step equal the program's; each step's draft and verify time equal the
    python_function windows read here with json (get_candidates' duration; from its end to
    update_candidate_strategy's start), and agree within 5 % with the program's CUDA-event timing;
  - SGLang- and vLLM-shaped traces built here (python_function frames by the engines' own function
    names): the steps and their draft/verify split worked out by hand; target work still running
    into a draft makes the drafting "partly hidden";
  - every other trace of tests/fixtures (and ../shared's): no speculative decoding found.
usage: spec_vs_truth.py KERNSCOPE FIXTURES_DIR [SHARED_DIR]"""
import glob, json, lzma, os, subprocess, sys, tempfile

K, FIX = sys.argv[1], sys.argv[2]
SHARED = sys.argv[3] if len(sys.argv) > 3 else ""
failures = 0


def check(ok, text):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + text, flush=True)


def spec(trace):
    p = subprocess.run([K, "spec", "--format", "json", trace], capture_output=True, text=True, timeout=600)
    if p.returncode not in (0, 2):
        check(False, f"{os.path.basename(trace)}: kernscope spec crashed (exit {p.returncode}): {p.stderr.strip()[:200]}")
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), p.stderr


# --- Hugging Face assisted generation, traced on an H100 --------------------------------------------
hf_dir = os.path.join(FIX, "spec", "hf_assisted_truncated_h100")
hf_trace = os.path.join(hf_dir, "trace.json.xz")
counted = json.load(open(os.path.join(hf_dir, "counts.json")))
got, err = spec(hf_trace)
if got is None:
    check(False, f"hf_assisted: kernscope spec failed: {err}")
else:
    want = counted["verify_steps"]
    check(got["present"] and len(got["steps"]) == len(want), f"hf_assisted: {len(got['steps'])} verify steps; the program counted {len(want)}")
    for g, w in zip(got["steps"], want):
        same = (g["proposed"], g["accepted"], g["emitted"]) == (w["proposed"], w["accepted"], w["emitted"])
        check(same, f"hf_assisted step {g['step']}: proposed {g['proposed']}, accepted {g['accepted']}, emitted {g['emitted']}; "
              f"the program counted {w['proposed']}, {w['accepted']}, {w['emitted']}")
        for key, ms in (("draft_ns", w["draft_ms"]), ("verify_ns", w["verify_ms"])):
            close = abs(g[key] / 1e6 - ms) <= max(0.05 * ms, 0.1)  # different clocks: host timestamps vs CUDA events
            check(close, f"hf_assisted step {g['step']}: {key} {g[key] / 1e6:.3f} ms; the program's CUDA events {ms:.3f} ms")
    t = counted["totals"]
    check((got["totals"]["proposed"], got["totals"]["accepted"], got["totals"]["emitted"]) == (t["proposed"], t["accepted"], t["emitted"])
          and abs(got["totals"]["acceptance"] - t["acceptance_rate"]) < 1e-12,
          f"hf_assisted totals: {got['totals']['accepted']} of {got['totals']['proposed']} accepted, {got['totals']['emitted']} emitted; "
          f"the program: {t['accepted']} of {t['proposed']}, {t['emitted']}")
    # The windows read here: get_candidates' own duration, then to update_candidate_strategy's start.
    events = json.load(lzma.open(hf_trace))["traceEvents"]
    fn = [e for e in events if e.get("cat") == "python_function"]
    drafts = sorted((e["ts"], e["ts"] + e["dur"]) for e in fn if e["name"].endswith(": get_candidates"))
    ends = sorted(e["ts"] for e in fn if e["name"].endswith(": update_candidate_strategy"))
    for g, (s, e), u in zip(got["steps"], drafts, ends):
        check(abs(g["draft_ns"] - (e - s) * 1000) <= 2 and abs(g["verify_ns"] - (u - e) * 1000) <= 2,
              f"hf_assisted step {g['step']}: draft {g['draft_ns']} ns, verify {g['verify_ns']} ns; the trace's windows "
              f"{(e - s) * 1000:.0f}, {(u - e) * 1000:.0f} ns")
    # Decode verifies (not the first, which also fed the prompt): time per emitted token by hand.
    decode = [g for g in got["steps"] if not g["prefill"]]
    by_hand = sum(g["draft_ns"] + g["verify_ns"] for g in decode) / 1e6 / sum(g["emitted"] for g in decode)
    check(abs(got["totals"]["ms_per_emitted_token"] - by_hand) < 1e-9 and got["steps"][0]["prefill"] and len(decode) == 2,
          f"hf_assisted: {got['totals']['ms_per_emitted_token']:.3f} ms per emitted token over the decode verifies ({by_hand:.3f} by hand)")
    # Two decode verifies of 3 and 1 positions: the line through them, at 1 position, is the plain step.
    (a, b) = sorted(decode, key=lambda g: g["verify_positions"])
    slope = (b["verify_ns"] - a["verify_ns"]) / 1e6 / (b["verify_positions"] - a["verify_positions"])
    check(abs(got["plain_decode"]["verify_ms_per_position"] - slope) < 1e-9 and abs(got["plain_decode"]["ms"] - a["verify_ns"] / 1e6) < 1e-9,
          f"hf_assisted: one more verify position {got['plain_decode']['verify_ms_per_position']:.3f} ms ({slope:.3f} by hand), plain decode "
          f"{got['plain_decode']['ms']:.3f} ms (the 1-position verify: {a['verify_ns'] / 1e6:.3f})")
    check(got["drafting"]["on_critical_path"], "hf_assisted: drafting on the critical path (the draft runs alone: transformers' loop is serial)")


# --- Engine-shaped traces built here ------------------------------------------------------------------
def py(name, ts, dur, tid=1):
    return {"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": {}}


def kernel(ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": "gemv_kernel", "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


def write(events):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}, f)
    f.close()
    return f.name


# SGLang EAGLE: forward_batch_generation [t, t+990) runs draft [t+10, t+300), verify, and
# forward_draft_extend_after_decode [t+800, t+950): draft 290 + 150 = 440 us, verify 990 - 440 = 550.
sgl = []
for i in range(3):
    t = 1000.0 + i * 1000
    w = "sglang/srt/speculative/eagle_worker.py"
    sgl += [py(f"{w}(300): forward_batch_generation", t, 990), py(f"{w}(400): draft", t + 10, 290),
            py(f"{w}(500): verify", t + 300, 500), py(f"{w}(600): forward_draft_extend_after_decode", t + 800, 150),
            kernel(t + 310, 400, i + 1)]
path = write(sgl)
got, err = spec(path)
os.unlink(path)
check(got is not None and got["engine"] == "SGLang EAGLE" and [(s["draft_ns"], s["verify_ns"], s["drafts"]) for s in got["steps"]] == [(440000, 550000, 2)] * 3
      and got["steps"][0]["proposed"] == -1 and "not in this trace" in got["tokens_from"] and got["drafting"]["on_critical_path"],
      f"SGLang-shaped: 3 steps of draft 440 us and verify 550 us, tokens not shown: {got and [(s['draft_ns'], s['verify_ns']) for s in got['steps']]}")

# vLLM: execute_model [t, t+800) verifies and proposes inside (propose_draft_token_ids [t+600, t+780));
# the target's kernel launched earlier runs [t+500, t+700): 100 us of it runs into the 180 us draft,
# so drafting is partly hidden (over 10 % of the draft's time overlapped).
vllm = []
for i in range(2):
    t = 1000.0 + i * 1000
    r = "vllm/v1/worker/gpu_model_runner.py"
    vllm += [py(f"{r}(2000): execute_model", t, 800), py(f"{r}(2400): propose_draft_token_ids", t + 600, 180),
             py("vllm/v1/spec_decode/eagle.py(150): propose", t + 610, 160), kernel(t + 500, 200, i + 1)]
path = write(vllm)
got, err = spec(path)
os.unlink(path)
check(got is not None and got["engine"] == "vLLM" and [(s["draft_ns"], s["verify_ns"]) for s in got["steps"]] == [(180000, 620000)] * 2
      and got["drafting"]["overlapped_ns"] == 200000 and not got["drafting"]["on_critical_path"],
      f"vLLM-shaped: 2 steps of draft 180 us and verify 620 us, 2 x 100 us of target work under the drafts: "
      f"{got and ([(s['draft_ns'], s['verify_ns']) for s in got['steps']], got['drafting'])}")

# --- No speculative decoding anywhere else --------------------------------------------------------------
others = [p for p in glob.glob(os.path.join(FIX, "**", "*"), recursive=True)
          if p.endswith((".sqlite.xz", ".json.xz", ".sqlite", ".json.gz", ".pt.trace.json")) and p != hf_trace and "/gold/" not in p]
if SHARED and os.path.isdir(SHARED):
    others += [p for p in glob.glob(os.path.join(SHARED, "*")) if p.endswith((".gz", ".xz"))]
said = 0
for p in sorted(others):
    got, err = spec(p)
    if got is None:
        continue  # not a trace kernscope reads (refused with exit 2; a crash was failed above)
    said += 1
    if got["present"]:
        check(False, f"{os.path.relpath(p, FIX) if p.startswith(FIX) else os.path.basename(p)}: speculative decoding claimed: {got['evidence']}")
check(said > 20, f"no speculative decoding claimed on {said} other traces")
sys.exit(1 if failures else 0)
