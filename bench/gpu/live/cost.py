"""Figures of bench/gpu/live/cost.sh.
  cost.py inside TRACE PROGRAM_JSON     steps inside windows (their decode_step_<i> range is in the trace) vs outside
  cost.py rounds DIR ROUNDS NAME...     per round, each configuration's TPOT and CPU/step, and its ratio to 'none'"""
import json, re, sqlite3, statistics, sys

if sys.argv[1] == "inside":
    db = sqlite3.connect(sys.argv[2])
    prog = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
    wins = db.execute("select start, end, openedBy from KERNSCOPE_CAPTURE_WINDOWS").fetchall()
    names = [t for (t,) in db.execute("select text from NVTX_EVENTS where text like 'measure:decode_step_%' and end is not null")]
    inside = {int(re.search(r"_(\d+)$", n).group(1)) for n in names}
    times = prog["step_ms"]
    # The steps right after a window's edge pay the switch (CUPTI enabling its kinds): shown apart.
    changes = [i for i in range(len(times)) if (i in inside) != ((i + 1) in inside)]
    edge = set(changes) | {i + 1 for i in changes} | {0}
    ins = [t for i, t in enumerate(times) if i in inside and i not in edge]
    out = [t for i, t in enumerate(times) if i not in inside and i not in edge]
    print(f"windows: {len(wins)}; steps in windows {len(ins)}, paused {len(out)}, at an edge {len(edge)}")
    mi, mo = statistics.median(ins), statistics.median(out)
    print(f"median step: in a window {mi:.3f} ms, paused {mo:.3f} ms, window/paused {mi / mo:.3f}; "
          f"means {statistics.mean(ins):.3f} / {statistics.mean(out):.3f}; edge steps median {statistics.median([times[i] for i in edge if i < len(times)]):.3f}")
    # Paired: each window's steps against the paused steps just before it.
    print("per window (window median / paused median before it):",
          [round(statistics.median([times[i] for i in range(a, a + 20) if i in inside and i not in edge] or [0]) /
                 statistics.median([times[i] for i in range(max(0, a - 20), a) if i not in inside and i not in edge] or [1]), 3)
           for a in sorted(i for i in inside if i - 1 not in inside)])
else:
    d, rounds, names = sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    rows = {n: [] for n in names}
    for r in range(1, rounds + 1):
        line = []
        for n in names:
            try:
                j = json.loads(open(f"{d}/{n}-{r}.json").read().strip().splitlines()[-1])
                rows[n].append((j["tpot_ms"], j["cpu_ms_per_step"]))
                line.append(f"{n} {j['tpot_ms']:.3f} ms (cpu {j['cpu_ms_per_step']:.2f})")
            except Exception as e:
                rows[n].append(None)
                line.append(f"{n} failed ({e})")
        print(f"round {r}: " + "; ".join(line))
    base = rows[names[0]]
    for n in names[1:]:
        ratios = [a[0] / b[0] - 1 for a, b in zip(rows[n], base) if a and b]
        cpu = [a[1] / b[1] - 1 for a, b in zip(rows[n], base) if a and b]
        if ratios:
            print(f"{n} vs {names[0]}: TPOT median {statistics.median(ratios) * 100:+.1f} % (rounds {', '.join(f'{x * 100:+.1f}' for x in ratios)}); "
                  f"CPU/step median {statistics.median(cpu) * 100:+.1f} %")
