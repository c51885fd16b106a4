#!/usr/bin/env python3
"""Times `nsys stats` and `kernscope stats` on the same four reports and the same file, interleaved
(A B C A B C ...), plus the bare SQLite scan floor; reports medians, ratios and peak RSS, and checks
that both tools wrote identical CSV.

    compare_nsys.py --nsys NSYS --kernscope K --floor sqlite_scan_floor --trace T.sqlite [--reps 5]
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "nvtx_sum"]


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024.0  # MiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nsys", required=True)
    ap.add_argument("--kernscope", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    out = tempfile.mkdtemp()
    rargs = [x for r in REPORTS for x in ("--report", r)]
    cmds = {
        "nsys stats": [a.nsys, "stats", *rargs, "--format", "csv", "--force-overwrite=true", "--output", f"{out}/nsys", a.trace],
        "kernscope stats": [a.kernscope, "stats", *rargs, "--format", "csv", "--output", f"{out}/ks", a.trace],
        "bare SQLite scan": [a.floor, a.trace],
    }
    for c in cmds.values():  # warm-up (page cache, nsys's Python start-up)
        timed(c)
    same = all(filecmp.cmp(f"{out}/nsys_{r}.csv", f"{out}/ks_{r}.csv", shallow=False) for r in REPORTS)
    times = {k: [] for k in cmds}
    rss = {k: [] for k in cmds}
    for _ in range(a.reps):
        for k, c in cmds.items():
            w, m = timed(c)
            times[k].append(w)
            rss[k].append(m)
    size = os.path.getsize(a.trace) / 2**20
    print(f"trace: {a.trace} ({size:.1f} MiB); reports: {', '.join(REPORTS)}; reps: {a.reps}, interleaved")
    print(f"CSV outputs identical (nsys vs kernscope): {same}")
    med = {k: statistics.median(v) for k, v in times.items()}
    for k in cmds:
        print(f"  {k:18s} median {med[k]:8.3f} s  (min {min(times[k]):.3f}, max {max(times[k]):.3f})  peak RSS {max(rss[k]):8.1f} MiB")
    print(f"  speed-up of kernscope over nsys stats: {med['nsys stats'] / med['kernscope stats']:.1f}x")
    print(f"  kernscope throughput / bare-scan throughput: {med['bare SQLite scan'] / med['kernscope stats']:.2f}")
    print(f"  kernscope peak RSS / file size: {max(rss['kernscope stats']) / size:.2f}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
