#!/usr/bin/env python3
"""Times several commands interleaved (A B A B ...) after one warm-up round; prints medians,
ranges, peak RSS and the ratio of each command to the first.

    time_interleaved.py --reps 5 --name stats -- CMD ... ;; --name report -- CMD ...
"""
import os
import statistics
import subprocess
import sys
import time


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024.0


def main():
    args = sys.argv[1:]
    reps = 5
    if args[:1] == ["--reps"]:
        reps, args = int(args[1]), args[2:]
    commands = []
    for part in " ".join(args).split(" ;; "):
        words = part.split()
        assert words[0] == "--name" and words[2] == "--", part
        commands.append((words[1], words[3:]))
    for _, cmd in commands:
        run(cmd)
    times = {n: [] for n, _ in commands}
    rss = {n: [] for n, _ in commands}
    for _ in range(reps):
        for n, cmd in commands:
            t, m = run(cmd)
            times[n].append(t)
            rss[n].append(m)
    base = statistics.median(times[commands[0][0]])
    for n, _ in commands:
        med = statistics.median(times[n])
        print(f"  {n:12s} median {med:8.3f} s (min {min(times[n]):.3f}, max {max(times[n]):.3f}), peak RSS {max(rss[n]):8.1f} MiB, "
              f"ratio to {commands[0][0]}: {med / base:.2f}")


if __name__ == "__main__":
    main()
