#!/usr/bin/env python3
"""Load + kernel breakdown of PyTorch-profiler traces: kernscope vs Holistic Trace Analysis (HTA).

Each tool runs in its own process, interleaved (kernscope, HTA, kernscope, HTA...), REPEAT times per
trace; wall time and peak RSS come from GNU time. The script also checks that both report the same
kernels: per kernel name, the total, minimum and maximum duration (HTA's sum/min/max in us vs
kernscope's cuda_gpu_kern_sum in ns) and the count (HTA: sum / mean).

usage: kineto_vs_hta.py KERNSCOPE REPEAT TRACE.json [TRACE.json ...]     (pip install HolisticTraceAnalysis)
"""
import csv
import io
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

HTA_SCRIPT = r"""
import sys, json
from hta.trace_analysis import TraceAnalysis
# HTA keeps only GPU work launched inside ProfilerStep iterations (and drops the last one unless
# asked): include it, so both tools see the same kernels where the trace has steps.
analyzer = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
_, metrics = analyzer.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10**9,
                                               include_memory_kernels=False)
rows = {r["name"]: [r["sum (us)"], r["min (us)"], r["max (us)"], r["mean (us)"]] for _, r in metrics.iterrows()}
json.dump(rows, open(sys.argv[2], "w"))
"""


def timed(cmd, env=None):
    """(wall seconds, peak RSS MiB, stdout) of a command, measured by GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        out = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", t.name, *cmd], check=True,
                             capture_output=True, text=True, env=env).stdout
        wall, rss_kb = t.read().split()[-2:]
    return float(wall), int(rss_kb) / 1024, out


def hta_scope(trace):
    """kernscope's kernel summary restricted to what HTA analyzes: with ProfilerStep ranges, only
    kernels whose launching call starts before the last step ends (HTA's _filter_irrelevant_gpu_kernels
    with include_last_profiler_step). Computed from kernscope's own columns (Python package)."""
    import kernscope
    import numpy as np
    t = kernscope.open(trace)
    k, api, nvtx = t.kernels(), t.api_calls(), t.nvtx()
    steps = nvtx[nvtx["text"].astype(str).str.startswith("ProfilerStep") & (nvtx["domain_id"] == 0)]
    if len(steps):
        last_end = steps["end_ns"].max()
        launched = set(api.loc[api["start_ns"] <= last_end, "correlation"].tolist())
        k = k[k["correlation"].isin(launched)]
    rows, floored = {}, {}
    for name, group in k.groupby("name", observed=True):
        d = group["duration_ns"].to_numpy()
        rows[name] = {"Name": name, "Total Time (ns)": int(d.sum()), "Min (ns)": int(d.min()),
                      "Max (ns)": int(d.max()), "Instances": len(d)}
        # HTA rounds nanosecond-resolution events to whole microseconds: start up, end down
        # (hta/common/trace_parser.py, citing pytorch/pytorch#122425).
        f = (group["end_ns"].to_numpy() // 1000 + (-group["start_ns"].to_numpy() // 1000)) * 1000
        floored[name] = {"Name": name, "Total Time (ns)": int(f.sum()), "Min (ns)": int(f.min()),
                         "Max (ns)": int(f.max()), "Instances": len(d)}
    return rows, floored


# HTA's kernel filter also takes CUDA synchronization events; kernscope keeps them as syncs.
HTA_SYNC_NAMES = {"Stream Wait Event", "Event Sync", "Stream Sync", "Context Sync"}


def compare(got, hta_rows):
    hta_rows = {n: v for n, v in hta_rows.items() if n not in HTA_SYNC_NAMES}
    problems = []
    if set(got) != set(hta_rows):
        problems.append(f"names differ: {len(set(got) ^ set(hta_rows))}")
    for name in set(got) & set(hta_rows):
        total, low, high, mean = hta_rows[name]
        k = got[name]
        if abs(int(k["Total Time (ns)"]) / 1000 - total) > 1e-6 * max(1, total):
            problems.append(f"total {name[:50]}")
        if abs(int(k["Min (ns)"]) / 1000 - low) > 1e-6 * max(1, low) or abs(int(k["Max (ns)"]) / 1000 - high) > 1e-6 * max(1, high):
            problems.append(f"min/max {name[:50]}")
        if mean > 0 and round(total / mean) != int(k["Instances"]):
            problems.append(f"count {name[:50]}")
    return problems


def main():
    kernscope, repeat, traces = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    print("| trace | JSON MB | kernscope s (median) | kernscope MB/s | kernscope peak MiB | HTA s (median) | HTA peak MiB | speed ratio | memory ratio | same kernels |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for trace in traces:
        size_mb = os.path.getsize(trace) / 1e6
        with tempfile.TemporaryDirectory() as tmp:
            rank_dir = pathlib.Path(tmp) / "traces"
            rank_dir.mkdir()
            os.link(trace, rank_dir / pathlib.Path(trace).name) if os.stat(trace).st_dev == os.stat(tmp).st_dev \
                else shutil.copy(trace, rank_dir)
            hta_out = pathlib.Path(tmp) / "hta.json"
            k_runs, h_runs = [], []
            note = "yes"
            kern_csv = ""
            for _ in range(repeat):
                wall, rss, kern_csv = timed([kernscope, "stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", trace])
                k_runs.append((wall, rss))
                wall, rss, _ = timed([sys.executable, "-c", HTA_SCRIPT, str(rank_dir), str(hta_out)])
                h_runs.append((wall, rss))
            import json
            scoped, floored = hta_scope(trace)
            hta_rows = json.loads(hta_out.read_text())
            problems = compare(scoped, hta_rows)
            if problems and not compare(floored, hta_rows):
                problems = []
                note = "yes (after HTA's rounding down to whole us)"
            # The summary kernscope printed covers every kernel; HTA's scope is a subset of it.
            printed = {r["Name"]: r for r in csv.DictReader(io.StringIO(kern_csv))}
            if not set(scoped) <= set(printed):
                problems.append("kernscope's summary lacks kernels its columns have")
        k_wall = statistics.median(w for w, _ in k_runs)
        h_wall = statistics.median(w for w, _ in h_runs)
        k_rss = max(r for _, r in k_runs)
        h_rss = max(r for _, r in h_runs)
        print(f"| {pathlib.Path(trace).name[:40]} | {size_mb:.1f} | {k_wall:.3f} | {size_mb / max(k_wall, 1e-9):.0f} | "
              f"{k_rss:.0f} | {h_wall:.2f} | {h_rss:.0f} | {h_wall / max(k_wall, 1e-9):.1f}x | {h_rss / k_rss:.1f}x | "
              f"{note if not problems else 'NO: ' + '; '.join(problems[:3])} |", flush=True)


if __name__ == "__main__":
    main()
