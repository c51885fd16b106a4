#!/usr/bin/env python3
"""Cross-checks kernscope's Kineto reader against an independent reading of the same JSON with
Python's json module (exact decimals): per kernel name and per CUDA API name, the count and the
total duration in ns must equal kernscope's cuda_gpu_kern_sum / cuda_api_sum CSV.

usage: kineto_json_check.py KERNSCOPE FIXTURE_DIR"""
import collections
import csv
import decimal
import gzip
import io
import json
import pathlib
import subprocess
import sys

KERNEL_CATS = {"kernel", "Kernel"}
API_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}


def to_ns(value):
    # Microseconds -> integer ns, half away from zero (durations are never negative here).
    return int((decimal.Decimal(str(value)) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def expected(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    kernels = collections.defaultdict(lambda: [0, 0])
    apis = collections.defaultdict(lambda: [0, 0])
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        table = kernels if e.get("cat") in KERNEL_CATS else apis if e.get("cat") in API_CATS else None
        if table is None:
            continue
        entry = table[e["name"]]
        entry[0] += 1
        entry[1] += to_ns(e.get("dur", 0))
    return kernels, apis


def reported(kernscope, path, report, count_column):
    out = subprocess.run([kernscope, "stats", "--report", report, "--format", "csv", str(path)],
                         check=True, capture_output=True, text=True).stdout
    rows = {}
    lines = out.splitlines()
    if not lines or not lines[0].startswith("Time"):
        return rows  # "does not contain" message: no rows
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        rows[row["Name"]] = [int(row[count_column]), int(row["Total Time (ns)"])]
    return rows


def main():
    kernscope, fixtures = sys.argv[1], pathlib.Path(sys.argv[2]) / "kineto"
    failures = 0
    checked = 0
    for path in sorted(fixtures.glob("*.json.gz")):
        kernels, apis = expected(path)
        for report, column, want in (("cuda_gpu_kern_sum", "Instances", kernels),
                                     ("cuda_api_sum", "Num Calls", apis)):
            got = reported(kernscope, path, report, column)
            want = {name: v for name, v in want.items()}
            if got != want:
                failures += 1
                missing = set(want) - set(got)
                extra = set(got) - set(want)
                diff = [n for n in set(want) & set(got) if want[n] != got[n]][:3]
                print(f"FAIL {path.name} {report}: {len(missing)} names missing, {len(extra)} extra, "
                      f"differing: {[(n[:60], want[n], got[n]) for n in diff]}")
            else:
                checked += len(want)
                print(f"ok   {path.name} {report}: {len(want)} names, "
                      f"{sum(v[0] for v in want.values())} events")
    print(f"{checked} names checked")
    if checked == 0:
        print("FAIL nothing was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
