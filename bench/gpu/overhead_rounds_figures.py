"""Same-round figures from bench/gpu/overhead_processes.sh's output (lines "round R WORKLOAD VARIANT:
<the workload's figure line> (wall S s)"): for each workload and variant, the median and range over
rounds of each figure the workload printed, and of its same-round ratio to the variant `none`
(for instructions per kernel, the same-round difference as well: instructions do not drift with the
host's clock, so a difference of a few instructions per launch is real).

  python3 bench/gpu/overhead_rounds_figures.py OUTPUT.txt [BASELINE]   (BASELINE: none)
"""
import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(r"^round (\d+) (\S+) (\S+): (.*)$")
FIGURE = re.compile(r"(\w+)=(-?[0-9.]+)")


def spread(values):
    values = sorted(values)
    return f"{statistics.median(values):.4g} ({values[0]:.4g} .. {values[-1]:.4g}, n={len(values)})"


def main(path, baseline="none"):
    runs = defaultdict(dict)  # (workload, variant) -> round -> {figure: value}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line.strip())
        if not m:
            continue
        figures = {k: float(v) for k, v in FIGURE.findall(m.group(4)) if k not in ("min", "max")}
        if figures:
            runs[(m.group(2), m.group(3))][int(m.group(1))] = figures
    for workload in sorted({w for w, _ in runs}):
        base = runs.get((workload, baseline), {})
        print(f"== {workload} (rounds with {baseline}: {len(base)})")
        for (w, variant), by_round in sorted(runs.items()):
            if w != workload:
                continue
            names = sorted({k for f in by_round.values() for k in f})
            for name in names:
                values = [f[name] for f in by_round.values() if name in f]
                text = f"  {variant:14s} {name:15s} {spread(values)}"
                if variant != baseline:
                    pairs = [(f[name], base[r][name]) for r, f in by_round.items()
                             if name in f and r in base and name in base[r] and base[r][name] > 0]
                    if pairs:
                        text += f"   vs {baseline}: {spread([100 * (a / b - 1) for a, b in pairs])} %"
                        if name == "instr":
                            text += f"   diff {spread([a - b for a, b in pairs])}"
                print(text)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
