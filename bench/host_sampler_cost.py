#!/usr/bin/env python3
"""Whole-program cost of `record`'s Python stack sampler (tools/kernscope/python_hook/kernscope_host.py):
a pure-Python workload (a call-heavy loop, 40 frames deep, the sampler's worst case: every tick takes the
GIL from a thread that always wants it) timed as a whole process with the hook installed as `record`
installs it, sampling off, at 100 Hz and at 1000 Hz, interleaved over ROUNDS rounds; medians printed with
the sampler's own account (its GIL share) from the trace. No GPU needed.
usage: bench/host_sampler_cost.py [ROUNDS]"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "kernscope", "python_hook")
WORK = r'''
import time
def leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s
def nest(depth, n):
    return leaf(n) if depth == 0 else nest(depth - 1, n)
t0 = time.perf_counter()
for _ in range(20000):
    nest(40, 200)
print(time.perf_counter() - t0)
'''


def run(sample, work):
    env = dict(os.environ, PYTHONPATH=HOOK, KERNSCOPE_OUTPUT=os.path.join(work, "c-%p.sqlite"), KERNSCOPE_SAMPLE=sample)
    start = time.perf_counter()
    inner = float(subprocess.run([sys.executable, "-c", WORK], env=env, check=True, capture_output=True, text=True).stdout)
    return time.perf_counter() - start, inner


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    work = tempfile.mkdtemp(prefix="kernscope-cost-")
    modes = ["none", "cpu", "cpu:1000"]
    walls = {m: [] for m in modes}
    for _ in range(rounds):
        for m in modes:
            walls[m].append(run(m, work)[1])
    base = statistics.median(walls["none"])
    for m in modes:
        med = statistics.median(walls[m])
        print("%-9s loop %.3f s (median of %d; runs %s) %+.1f %%" % (m, med, rounds, " ".join("%.3f" % w for w in walls[m]),
                                                                     100 * (med / base - 1)))
    for name in sorted(os.listdir(work)):
        info = dict(sqlite3.connect(os.path.join(work, name)).execute("SELECT name, value FROM KERNSCOPE_HOST_INFO"))
        if "sampler_hz_asked" in info:
            print("%s: asked %s Hz, achieved %s Hz, GIL share %s" % (name, info["sampler_hz_asked"], info["sampler_hz_achieved"],
                                                                     info["sampler_busy_share"]))


if __name__ == "__main__":
    main()
