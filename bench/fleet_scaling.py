#!/usr/bin/env python3
"""The fleet tier (`python -m kernscope.fleet`) over growing rank sets made from one real trace, with a
local process pool and with a local Dask cluster (distributed.LocalCluster, WORKERS processes), plus
`kernscope ranks` (the C++ engine, one process) up to RANKS_MAX ranks, interleaved per size, REPEAT
rounds. Each run is its own process under GNU time (wall; peak RSS of the process tree's largest
process); the fleet's JSON adds the driver's own peak and each worker's peak. Every fleet run is
checked against the generator's truth file: all clock offsets exact, stragglers' times-last exact.

usage: fleet_scaling.py SET_DIR "8 16 ... 512" REPEAT WORKERS KERNSCOPE RANKS_MAX [HTA_PYTHON]
  SET_DIR: made by tests/ranks/make_rank_set.py --ranks MAX --seq (SET_DIR.truth.json beside it);
  a size N uses the first N ranks (symlinked into SET_DIR.nN/). HTA_PYTHON: an interpreter with
  HolisticTraceAnalysis, run on the 8-rank set in the same rounds (load + comm/comp overlap).
Prints a TSV row per run on stdout.
"""
import json
import os
import subprocess
import sys
import tempfile

HTA_SCRIPT = r"""
import sys, time, resource
from hta.trace_analysis import TraceAnalysis
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)
t = time.perf_counter()
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
loaded = time.perf_counter() - t
overlap = analyzer.get_comm_comp_overlap(visualize=False)
print("hta_load_s=%.2f" % loaded, "overlap_pct=" + ";".join(
    "%s:%.2f" % (int(r["rank"]), r["comp_comm_overlap_pctg"]) for _, r in overlap.iterrows()))
"""


def subset(set_dir, n):
    folder = f"{set_dir}.n{n}"
    if not os.path.isdir(folder):
        os.makedirs(folder)
        for r in range(n):
            os.symlink(os.path.join(set_dir, f"rank{r}.trace.json.gz"), os.path.join(folder, f"rank{r}.trace.json.gz"))
    return folder


def hta_copy(folder):
    """The 8 files as HTA 0.5.0 can number them: it finds a file's rank with the regex
    '"rank":\\s+(\\d+)' (PyTorch writes '"rank": 3'), and make_rank_set.py writes compact JSON. Only
    that space is added; without it HTA reads every file as rank 0 and keeps one."""
    out = folder + ".hta"
    if not os.path.isdir(out):
        os.makedirs(out)
        for name in sorted(os.listdir(folder)):
            with open_any(os.path.join(folder, name), "rt") as f:
                text = f.read()
            text = text.replace('"distributedInfo":{"backend":"nccl","rank":', '"distributedInfo":{"backend":"nccl","rank": ', 1)
            with open_any(os.path.join(out, name), "wt", compresslevel=6) as f:
                f.write(text)
    return out


def timed(cmd, env=None):
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        run = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", t.name, *cmd], capture_output=True, text=True, env=env)
        fields = t.read().split()
    if run.returncode != 0:
        sys.exit(f"failed ({run.returncode}): {' '.join(cmd[:4])}...\n{run.stderr[-2000:]}")
    return float(fields[-2]), int(fields[-1]) / 1024, run.stdout


def check(doc, truth, n):
    offsets = {r["rank"]: r["clock_offset_ns"] for r in doc["tables"]["ranks"]}
    wrong = [r for r in range(n) if offsets.get(r) != truth["offsets_ns"][str(r)]]
    lasts = {r["rank"]: r["times_last"] for r in doc["tables"]["stragglers"]}
    # The generator's schedule names ranks 5 and 2; below 6 ranks rank 5 does not exist.
    want = {int(r): t for r, t in truth["times_last"].items() if t and int(r) < n}
    return f"offsets_wrong={len(wrong)} stragglers_ok={lasts == want}"


def main():
    set_dir, sizes, repeat, workers, kernscope, ranks_max = sys.argv[1:7]
    hta_python = sys.argv[7] if len(sys.argv) > 7 else None
    sizes = [int(s) for s in sizes.split()]
    with open(set_dir + ".truth.json") as f:
        truth = json.load(f)
    print("round\ttool\tranks\twall_s\ttree_peak_mib\tdriver_peak_mib\tworker_peak_mib\tdigest_s\treduce_s\tdigest_mb\tcheck")
    for rnd in range(int(repeat)):
        for n in sizes:
            folder = subset(set_dir, n)
            runs = [("local", "local"), ("dask", "dask")]
            if n <= int(ranks_max):
                runs.append(("kernscope_ranks", None))
            if hta_python and n == 8:
                runs.append(("hta", None))
            for tool, executor in runs:
                with tempfile.TemporaryDirectory(prefix="fleetbench-") as out:
                    if executor:
                        cmd = [sys.executable, "-m", "kernscope.fleet", folder, "--out", out, "--executor", executor,
                               "--workers", workers, "--format", "json"]
                        wall, tree, text = timed(cmd)
                        doc = json.loads(text)
                        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
                        worker = max(r["worker_peak_rss_kb"] for r in doc["per_trace"]) / 1024
                        print(f"{rnd}\tfleet_{tool}\t{n}\t{wall:.2f}\t{tree:.1f}\t{doc['driver_peak_rss_kb'] / 1024:.1f}\t"
                              f"{worker:.1f}\t{doc['digest_seconds']:.2f}\t{doc['reduce_seconds']:.2f}\t"
                              f"{size / 1e6:.2f}\t{check(doc, truth, n)}", flush=True)
                    elif tool == "kernscope_ranks":
                        wall, tree, text = timed([kernscope, "ranks", folder, "--format", "json"])
                        doc = json.loads(text)
                        offsets = {r["Rank"]: r["Clock Offset (ns)"] for r in doc["tables"]["ranks"]}
                        wrong = sum(offsets.get(r) != truth["offsets_ns"][str(r)] for r in range(n))
                        print(f"{rnd}\tkernscope_ranks\t{n}\t{wall:.2f}\t{tree:.1f}\t\t\t\t\t\toffsets_wrong={wrong}", flush=True)
                    else:
                        wall, tree, text = timed([hta_python, "-c", HTA_SCRIPT, hta_copy(folder)])
                        print(f"{rnd}\thta\t{n}\t{wall:.2f}\t{tree:.1f}\t\t\t\t\t\t{text.strip()}", flush=True)


if __name__ == "__main__":
    main()
