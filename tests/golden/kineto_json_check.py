#!/usr/bin/env python3
"""Cross-checks kernscope's Kineto reader against an independent reading of the same JSON with
Python's json module (exact decimals): per kernel name, per CUDA API name and per range (PyTorch's
operator, user-annotation and GPU-annotation ranges, which kernscope shows as NVTX ranges in the
domains cpu_op, default and gpu_user_annotation), the count and the total duration in ns must equal
kernscope's cuda_gpu_kern_sum / cuda_api_sum / nvtx_sum CSV. Where the JSON has no event of a
kind, kernscope must say the report has no data (an empty output is not taken for agreement), and
every fixture must have names compared. (Checked with a kernscope wrapper that prints nothing and
says nothing for a skipped report, and one that drops the last nvtx_sum row: each fails.)

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
# Range categories -> the NVTX domain kernscope files them under (README.md, "PyTorch's cpu_op ...");
# nsys names a range "DOMAIN:TEXT", with an empty DOMAIN for the default domain.
RANGE_DOMAINS = {"cpu_op": "cpu_op", "Operator": "cpu_op", "user_annotation": "", "gpu_user_annotation": "gpu_user_annotation"}


def to_ns(value):
    # Microseconds -> integer ns, half away from zero (durations are never negative here).
    return int((decimal.Decimal(str(value)) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def expected(path):
    """Per report, name -> [count, total ns], from the complete ("X") events of the JSON."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    tables = {report: collections.defaultdict(lambda: [0, 0]) for report, _, _ in REPORTS}
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in KERNEL_CATS:
            entry = tables["cuda_gpu_kern_sum"][e["name"]]
        elif cat in API_CATS:
            entry = tables["cuda_api_sum"][e["name"]]
        elif cat in RANGE_DOMAINS:
            entry = tables["nvtx_sum"][RANGE_DOMAINS[cat] + ":" + e["name"]]
        else:
            continue
        entry[0] += 1
        entry[1] += to_ns(e.get("dur", 0))
    return tables


def reported(kernscope, path, report, name_column, count_column):
    """kernscope's rows (name -> [count, total ns]); None when it said the trace has no such data."""
    result = subprocess.run([kernscope, "stats", "--report", report, "--format", "csv", str(path)],
                            check=True, capture_output=True, text=True)
    lines = result.stdout.splitlines()
    if not lines:
        said_no_data = f"SKIPPED {report}" in result.stderr or f"{report}: no data" in result.stderr
        if not said_no_data:
            raise AssertionError(f"{report} printed nothing and did not say why: {result.stderr!r}")
        return None
    if not lines[0].startswith("Time"):
        raise AssertionError(f"{report} printed no CSV table: {lines[0][:100]!r}")
    rows = collections.defaultdict(lambda: [0, 0])
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        entry = rows[row[name_column]]  # nvtx_sum has a row per style (push/pop, start/end) of a range
        entry[0] += int(row[count_column])
        entry[1] += int(row["Total Time (ns)"])
    return dict(rows)


REPORTS = (("cuda_gpu_kern_sum", "Name", "Instances"), ("cuda_api_sum", "Name", "Num Calls"),
           ("nvtx_sum", "Range", "Instances"))


def main():
    kernscope, fixtures = sys.argv[1], pathlib.Path(sys.argv[2]) / "kineto"
    failures = 0
    checked = 0
    for path in sorted(fixtures.glob("*.json.gz")):
        tables = expected(path)
        names_here = 0
        for report, name_column, count_column in REPORTS:
            want = dict(tables[report])
            try:
                got = reported(kernscope, path, report, name_column, count_column)
            except AssertionError as e:
                failures += 1
                print(f"FAIL {path.name} {e}")
                continue
            if got is None:
                if want:
                    failures += 1
                    print(f"FAIL {path.name} {report}: kernscope says no data, the JSON has {len(want)} names")
                else:
                    print(f"ok   {path.name} {report}: no such events in the JSON, and kernscope says so")
                continue
            if got != want:
                failures += 1
                missing = set(want) - set(got)
                extra = set(got) - set(want)
                diff = [n for n in set(want) & set(got) if want[n] != got[n]][:3]
                print(f"FAIL {path.name} {report}: {len(missing)} names missing, {len(extra)} extra, "
                      f"differing: {[(n[:60], want[n], got[n]) for n in diff]}")
            else:
                names_here += len(want)
                print(f"ok   {path.name} {report}: {len(want)} names, "
                      f"{sum(v[0] for v in want.values())} events")
        if names_here == 0:
            failures += 1
            print(f"FAIL {path.name}: no name was compared")
        checked += names_here
    print(f"{checked} names checked")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
