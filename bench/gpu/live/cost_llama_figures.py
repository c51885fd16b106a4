"""Figures of bench/gpu/live/cost_llama.sh.
  cost_llama_figures.py inside TRACE RESULT_JSON [EVERY FOR]
      each measured step (the program's clock) inside a capture window (its NVTX range is in the trace) vs
      paused; the steps at a window's edge apart. With EVERY and FOR (time windows of FOR s every EVERY s):
      the run's mean step against its paused median, and that excess scaled to 1 s every 60 s.
  cost_llama_figures.py rounds ROUNDS_JSONL [STEPS_CSV]
      per round each configuration's TPOT, median step and CPU ms per step; the same-round ratio to 'none'
      (median and range); with the `kernscope steps -f csv` output of a defaults trace of the same workload,
      launches per decode step and microseconds per launch (median same-round TPOT difference / launches)."""
import csv, json, re, sqlite3, statistics as st, sys


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]


def inside(trace, result, every=None, length=None):
    db = sqlite3.connect(trace)
    prog = json.load(open(result))
    times = prog["step_ms"]
    wins = db.execute("select start, end, openedBy, closedBy from KERNSCOPE_CAPTURE_WINDOWS").fetchall()
    names = [t for (t,) in db.execute("select text from NVTX_EVENTS where text like 'measure:decode_step_%' and end is not null")]
    ins = {int(re.search(r"_(\d+)$", n).group(1)) for n in names}
    # A step next to a window's edge pays the switch (CUPTI enabling or disabling its kinds), or was cut by it
    # (a time window opens mid-step: such a step is in no whole range): kept apart from both.
    changes = [i for i in range(len(times) - 1) if (i in ins) != ((i + 1) in ins)]
    edge = set(changes) | {i + 1 for i in changes} | {0}
    win = [t for i, t in enumerate(times) if i in ins and i not in edge]
    pau = [t for i, t in enumerate(times) if i not in ins and i not in edge]
    edg = [times[i] for i in sorted(edge) if i < len(times)]
    print(f"windows in the trace: {len(wins)}; measured steps {len(times)}: inside a window {len(win)}, paused {len(pau)}, "
          f"at an edge {len(edg)}")
    for name, xs in (("inside", win), ("paused", pau), ("edge", edg)):
        if xs:
            print(f"  {name:6s} median {st.median(xs):7.3f} ms  mean {st.mean(xs):7.3f}  p10 {q(xs, .1):7.3f}  p90 {q(xs, .9):7.3f}  n={len(xs)}")
    if win and pau:
        print(f"  inside/paused: median {st.median(win) / st.median(pau) - 1:+.2%}, mean {st.mean(win) / st.mean(pau) - 1:+.2%}")
    # Paired: each run of window steps against the paused steps just before it (the same stretch of the run).
    runs, cur = [], []
    for i in range(len(times)):
        if i in ins and i not in edge:
            cur.append(i)
        elif cur and i not in ins:
            runs.append(cur); cur = []
    if cur:
        runs.append(cur)
    ratios = []
    for r in runs:
        before = [times[i] for i in range(max(0, r[0] - 30), r[0]) if i not in ins and i not in edge]
        if len(before) >= 3:
            ratios.append(st.median(times[i] for i in r) / st.median(before) - 1)
    if ratios:
        print(f"  per window (its median step / the paused median just before it), {len(ratios)} windows: median {st.median(ratios):+.2%}, "
              f"p10 {q(ratios, .1):+.2%}, p90 {q(ratios, .9):+.2%}, range {min(ratios):+.2%} .. {max(ratios):+.2%}")
    if every:
        # Steps on this host are skewed (the paused mean sits above the paused median), so the excess is given
        # against both: the paused median and the paused mean.
        every, length = float(every), float(length)
        nwin = max(1, len(wins))
        run_ms = sum(times)
        inside_ms = sum(times[i] for i in ins if i not in edge)
        print(f"  averaged over the measured steps ({run_ms / 1e3:.2f} s; windows of {length} s every {every} s): mean step "
              f"{st.mean(times):.3f} ms vs paused mean {st.mean(pau):.3f} ({st.mean(times) / st.mean(pau) - 1:+.2%}), "
              f"vs paused median {st.median(pau):.3f} ({st.mean(times) / st.median(pau) - 1:+.2%})")
        for label, base in (("paused median", st.median(pau)), ("paused mean", st.mean(pau))):
            excess = sum(t - base for i, t in enumerate(times) if i in ins or i in edge)  # what windows and edges added
            per_s = sum(times[i] - base for i in ins if i not in edge) / max(inside_ms / 1e3, 1e-9)  # ms added per s inside
            edge_per_win = sum(times[i] - base for i in edge if i > 0) / nwin
            print(f"  against the {label}: windows and edges added {excess:.1f} ms ({excess / run_ms:+.2%} of the run); "
                  f"{per_s:.1f} ms per s inside, {edge_per_win:.2f} ms at each window's edges; scaled to 1 s every 60 s: "
                  f"({per_s:.1f} + {edge_per_win:.2f}) / 60000 = {(per_s + edge_per_win) / 60000:+.3%} over paused")

def rounds(path, steps_csv=None):
    runs = [json.loads(l) for l in open(path) if l.strip()]
    cfgs = list(dict.fromkeys(r["config"] for r in runs))
    by = {(r["round"], r["config"]): r for r in runs}
    rs = sorted({r["round"] for r in runs})
    print("per round, TPOT ms (median step ms; CPU ms per step):")
    print("| round | " + " | ".join(cfgs) + " |")
    print("|---|" + "---|" * len(cfgs))
    for n in rs:
        cells = []
        for c in cfgs:
            r = by.get((n, c))
            cells.append(f"{r['tpot_ms']:.3f} ({r['median_step_ms']:.3f}; {r['cpu_ms_per_step']:.2f})" if r and "tpot_ms" in r else "failed")
        print(f"| {n} | " + " | ".join(cells) + " |")
    launches = None
    if steps_csv:
        rows = [r for r in csv.DictReader(open(steps_csv)) if "measure:decode_step" in r.get("Name", "")]
        if rows:
            launches = st.median(float(r["Launches"]) for r in rows)
            print(f"launches per decode step (median of {len(rows)} measured decode steps, kernscope steps): {launches:g}; "
                  f"kernels {st.median(float(r['Kernels']) for r in rows):g}")
    print("same-round vs none: median (range) over rounds with both")
    for c in cfgs:
        if c == "none":
            continue
        pairs = [(by[(n, c)], by[(n, "none")]) for n in rs if "tpot_ms" in by.get((n, c), {}) and "tpot_ms" in by.get((n, "none"), {})]
        if not pairs:
            continue
        f = lambda k: [a[k] / b[k] - 1 for a, b in pairs]
        line = ", ".join(f"{lbl} {st.median(f(k)):+.2%} ({min(f(k)):+.2%} .. {max(f(k)):+.2%})"
                         for lbl, k in (("TPOT", "tpot_ms"), ("median step", "median_step_ms"), ("CPU/step", "cpu_ms_per_step")))
        d = [a["tpot_ms"] - b["tpot_ms"] for a, b in pairs]
        line += f"; TPOT difference median {st.median(d):.3f} ms ({min(d):.3f} .. {max(d):.3f})"
        if launches:
            line += f" -> {st.median(d) * 1e3 / launches:.2f} us per launch"
        print(f"  {c} ({len(pairs)} rounds): {line}")
    for c in cfgs:
        xs = [by[(n, c)]["tpot_ms"] for n in rs if "tpot_ms" in by.get((n, c), {})]
        w = [by[(n, c)]["wall_s"] for n in rs if (n, c) in by]
        if xs:
            print(f"  {c}: TPOT median {st.median(xs):.3f} ms, range {min(xs):.3f} .. {max(xs):.3f}; wall per run median {st.median(w):.1f} s")


if __name__ == "__main__":
    if sys.argv[1] == "inside":
        inside(*sys.argv[2:])
    else:
        rounds(*sys.argv[2:])
